/**
 * The planning pipeline behind the `plan` tool (seed 000 "Planning"): Phase 1 analysis, then
 * Phase 3 execution plan with one repair attempt. Two or three non-streaming model calls, all
 * with `think: false` (reasoning models would otherwise leak chain-of-thought into the sections;
 * "low" on gpt-oss, which cannot turn it off: llm/helper-think.ts).
 * Takes its model and everything else as parameters; emits nothing itself but `onStatus`.
 */
import { performance } from 'node:perf_hooks';
import { helperThink } from '../../llm/helper-think.js';
import type { ChatMessage, ChatResult, LlmClient } from '../../llm/types.js';
import type { ScratchpadEntry, TodoItem } from '../../tools/types.js';
import { parseAnalysis, parseExecutionPlan, type ParsedPlan } from './parse.js';
import { PlanningError } from './planning-error.js';
import { fillTemplate, loadPlanningPrompt, planningPromptDir } from './prompts.js';
import { followUpFor, renderAnalysis, renderDone, renderFindings, renderPlanText, renderTodo } from './render.js';
import { MAX_STEPS, STEP_RANGE, type Analysis, type Complexity, type PlanStep } from './types.js';
import { planningWindow } from './window.js';

/** Planning phases as `planning_status` reports them. */
export type PlanningPhase = 'analysis' | 'execution_plan' | 'done';

/** Packed context of a re-plan (`plan {reason, updated_goal?}`); its todo is replaced afterwards. */
export interface ReplanContext {
  reason: string;
  updatedGoal?: string;
  todo: TodoItem[];
  scratchpad: ScratchpadEntry[];
}

/** What `runPlanning` needs; narrow on purpose (no config, no store). */
export interface PlanningInput {
  llm: LlmClient;
  model: string;
  numCtx: number;
  signal: AbortSignal;
  /** The conversation so far (the context view); windowed to ~20k chars. */
  conversation: readonly ChatMessage[];
  /** The original task statement, pinned at the top of the window. */
  task: string;
  /** The caller's tool names (valid `TOOL:` targets). */
  tools: readonly string[];
  /** Profile ids valid for `AGENT:`; ignored when `tools` lacks `spawn_agent`. */
  profiles: string[];
  /** Sub-agents are offered DIRECT and get the "execute now" follow-up. */
  isSubagent: boolean;
  replan?: ReplanContext;
  onStatus?: (phase: PlanningPhase, message: string) => void;
  keepAlive?: string | number;
  /** Where the prompt files are; defaults to `prompts/planning/` at the package root. */
  promptDir?: URL;
}

/** Token usage over the planner's model calls (for the run's usage totals). */
export interface PlanningUsage {
  promptTokens: number;
  completionTokens: number;
  /** Model calls made (2 normally, 3 with a repair, 1 for DIRECT). */
  calls: number;
}

/** A fallback the user should hear about; shaped like the `warning` event payload. */
export interface PlanningWarning {
  /** `plan_analysis_unreadable` or `plan_truncated`. */
  code: string;
  message: string;
}

/** Planning debug data (the caller appends it to the session's planning logs, capped at 20). */
export interface PlanningDebug {
  phase1Raw: string;
  /** The first Phase 3 answer ("" for DIRECT). */
  phase3Raw: string;
  /** The repair answer, when a repair was asked for. */
  repairRaw?: string;
  repaired: boolean;
  isReplan: boolean;
  /** What the parsers assumed (unknown tools run as SELF, missing markers, renumbering…). */
  notes: string[];
  durationsMs: { analysis: number; execution_plan?: number; repair?: number; total: number };
  /** UTF-8 bytes of message content sent per call. */
  requestBytes: { analysis: number; execution_plan?: number; repair?: number };
}

/** Result of a planning run. For DIRECT, the plan fields are empty and nothing is injected. */
export interface PlanOutcome {
  /** A sub-agent's subtask was judged trivial: no Phase 3, no plan, no todo. */
  direct: boolean;
  analysis: Analysis;
  complexity: Complexity;
  milestones: string[];
  steps: PlanStep[];
  /** Injected into the conversation as an assistant message; the plan card's text. */
  planText: string;
  /** One todo item per step, replacing the todo. */
  todoItems: string[];
  /** The plan tool's result text (the follow-up instruction); "" for DIRECT. */
  followUp: string;
  /** Fallbacks the user should hear about; emit each as a `warning` event. */
  warnings: PlanningWarning[];
  usage: PlanningUsage;
  debug: PlanningDebug;
}

const EMPTY_ANALYSIS: Omit<Analysis, 'complexity'> = {
  task: '',
  goal: '',
  unknowns: [],
  resources: [],
  knowledgeRules: [],
  subtasks: [],
  commitments: [],
  direct: false,
};

/**
 * Runs Phase 1 and (unless a sub-agent's subtask is DIRECT) Phase 3. Throws `PlanningError` when
 * the plan is still unreadable after the repair attempt (or a prompt file is missing); LLM
 * errors and aborts propagate unchanged.
 */
export async function runPlanning(input: PlanningInput): Promise<PlanOutcome> {
  const started = performance.now();
  const dir = input.promptDir ?? planningPromptDir();
  const usage: PlanningUsage = { promptTokens: 0, completionTokens: 0, calls: 0 };
  const notes: string[] = [];
  const warnings: PlanningWarning[] = [];
  const call = async (messages: ChatMessage[]): Promise<{ content: string; ms: number; bytes: number }> => {
    input.signal.throwIfAborted();
    const t0 = performance.now();
    const result: ChatResult = await input.llm.chat({
      model: input.model,
      messages,
      think: await helperThink(input.llm, input.model, input.signal),
      numCtx: input.numCtx,
      keepAlive: input.keepAlive,
      signal: input.signal,
    });
    usage.calls++;
    usage.promptTokens += result.usage.promptTokens;
    usage.completionTokens += result.usage.completionTokens;
    const bytes = messages.reduce((n, m) => n + Buffer.byteLength(m.content, 'utf8'), 0);
    return { content: result.content, ms: Math.round(performance.now() - t0), bytes };
  };

  // Phase 1: analysis.
  const replan = input.replan;
  input.onStatus?.('analysis', replan ? `Re-planning: ${replan.reason}` : 'Analysing the task');
  const directOption = input.isSubagent ? await loadPlanningPrompt('direct-option', dir) : '';
  let user = planningWindow(input.conversation, input.task);
  if (replan) {
    user += `\n\n${fillTemplate(await loadPlanningPrompt('replan', dir), {
      reason: replan.reason,
      updated_goal: replan.updatedGoal?.trim() || '(unchanged)',
      todo: renderTodo(replan.todo),
      findings: renderFindings(replan.scratchpad),
    })}`;
  }
  const phase1 = await call([
    { role: 'system', content: fillTemplate(await loadPlanningPrompt('analysis', dir), { direct_option: directOption.trim() }).trim() },
    { role: 'user', content: user },
  ]);
  const parsed = parseAnalysis(phase1.content);
  let analysis: Analysis;
  if ('problems' in parsed) {
    analysis = { ...EMPTY_ANALYSIS, complexity: 'medium' };
    warnings.push({
      code: 'plan_analysis_unreadable',
      message: 'plan: the task analysis was unreadable; planned from the task statement as medium complexity',
    });
  } else {
    const { notes: analysisNotes, ...rest } = parsed;
    analysis = rest;
    notes.push(...analysisNotes);
  }
  const debug: PlanningDebug = {
    phase1Raw: phase1.content,
    phase3Raw: '',
    repaired: false,
    isReplan: replan !== undefined,
    notes,
    durationsMs: { analysis: phase1.ms, total: 0 },
    requestBytes: { analysis: phase1.bytes },
  };

  if (analysis.direct && input.isSubagent) {
    input.onStatus?.('done', 'Subtask is simple; no plan needed');
    debug.durationsMs.total = Math.round(performance.now() - started);
    return { direct: true, analysis, complexity: analysis.complexity, milestones: [], steps: [], planText: '', todoItems: [], followUp: '', warnings, usage, debug };
  }
  if (analysis.direct) notes.push('the model answered DIRECT; ignored (offered to sub-agents only)');

  // Phase 3: execution plan, with one repair attempt.
  const complexity = analysis.complexity;
  const [low, high] = STEP_RANGE[complexity];
  const canSpawn = input.tools.includes('spawn_agent');
  if (!canSpawn && input.profiles.length > 0) notes.push('no spawn_agent tool; AGENT profiles not offered');
  const profiles = canSpawn ? input.profiles : [];
  const parseOptions = { knownTools: input.tools, knownProfiles: profiles };
  input.onStatus?.('execution_plan', `Writing the execution plan (complexity: ${complexity})`);
  const messages: ChatMessage[] = [
    { role: 'system', content: (await loadPlanningPrompt('execution', dir)).trim() },
    {
      role: 'user',
      content: fillTemplate(await loadPlanningPrompt('execution-input', dir), {
        analysis: renderAnalysis(analysis, input.task.trim()),
        complexity,
        depth: `${low}-${high}`,
        tools: input.tools.length > 0 ? input.tools.join(', ') : 'none',
        profiles: profiles.length > 0 ? profiles.join(', ') : 'none',
        done: replan ? renderDone(replan.todo) : 'none',
      }).trim(),
    },
  ];
  const phase3 = await call(messages);
  debug.phase3Raw = phase3.content;
  debug.durationsMs.execution_plan = phase3.ms;
  debug.requestBytes.execution_plan = phase3.bytes;
  let plan = parseExecutionPlan(phase3.content, parseOptions);

  if ('problems' in plan) {
    const first = plan;
    input.onStatus?.('execution_plan', 'Plan format unreadable; asking the model to repair it');
    const repair = await call([
      ...messages,
      { role: 'assistant', content: phase3.content },
      { role: 'user', content: fillTemplate(await loadPlanningPrompt('repair', dir), { problems: first.problems.map((p) => `- ${p}`).join('\n') }).trim() },
    ]);
    debug.repairRaw = repair.content;
    debug.repaired = true;
    debug.durationsMs.repair = repair.ms;
    debug.requestBytes.repair = repair.bytes;
    plan = parseExecutionPlan(repair.content, parseOptions);
    if ('problems' in plan) {
      const oversized = plan.oversized ?? first.oversized;
      if (!oversized) {
        throw new PlanningError(`plan: the model's execution plan was unreadable after one repair attempt: ${plan.problems.join('; ')}`, plan.problems);
      }
      warnings.push({ code: 'plan_truncated', message: `plan: the model wrote ${oversized.steps.length} steps; kept the first ${MAX_STEPS}` });
      plan = { ...oversized, steps: oversized.steps.slice(0, MAX_STEPS) };
    }
  }
  return finish(plan, analysis, input, { usage, debug, warnings, started, range: [low, high] });
}

function finish(
  plan: ParsedPlan,
  analysis: Analysis,
  input: PlanningInput,
  ctx: { usage: PlanningUsage; debug: PlanningDebug; warnings: PlanningWarning[]; started: number; range: [number, number] },
): PlanOutcome {
  const { complexity } = analysis;
  ctx.debug.notes.push(...plan.notes);
  const count = plan.steps.length;
  if (count < ctx.range[0] || count > ctx.range[1]) {
    ctx.debug.notes.push(`${count} steps for a ${complexity} task (asked for ${ctx.range[0]}-${ctx.range[1]})`);
  }
  const goal = input.replan?.updatedGoal?.trim() || analysis.goal;
  const planText = renderPlanText({ complexity, goal, milestones: plan.milestones, steps: plan.steps });
  input.onStatus?.('done', `Plan ready: ${count} step${count === 1 ? '' : 's'} (complexity: ${complexity})`);
  ctx.debug.durationsMs.total = Math.round(performance.now() - ctx.started);
  return {
    direct: false,
    analysis,
    complexity,
    milestones: plan.milestones,
    steps: plan.steps,
    planText,
    todoItems: plan.steps.map((s) => s.text),
    followUp: followUpFor(complexity, input.isSubagent),
    warnings: ctx.warnings,
    usage: ctx.usage,
    debug: ctx.debug,
  };
}
