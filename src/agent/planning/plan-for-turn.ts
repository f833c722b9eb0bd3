/**
 * The `plan` tool's side of the turn (seed 000 "Planning"): runs the planning pipeline, puts
 * the plan into the todo list and into the tool result the model reads (and the display buffer
 * as an assistant message marked `is_plan`), emits `planning_status` / `plan_ready`, keeps the planning debug
 * log, and decides the follow-up: complex plans wait for a person's confirmation when one
 * can answer; headless runs proceed and say so in an event.
 *
 * It reads the turn and returns what changes (`PlanChange`): the host (`turn-host.ts`) counts
 * the usage, stores the planning log and offers the plan to the display buffer. Its events
 * (status, warnings, `todo_updated`, `plan_ready`) go live into the turn's stream.
 */
import { isAbortError } from '../../errors.js';
import type { ToolResult, TodoItem } from '../../tools/types.js';
import type { AgentDeps } from '../agent-types.js';
import { PlanningError } from './planning-error.js';
import { runPlanning, type ReplanContext } from './plan-runner.js';
import type { TurnState } from '../turn-state.js';
import type { ChatUsage } from '../../llm/types.js';

/** What a planning run changes in the turn, applied by the host. */
export interface PlanChange {
  /** The plan tool's result, as the model reads it. */
  result: ToolResult;
  /** Planner calls made, and what they cost (none when it failed before any). */
  calls: number;
  usage: ChatUsage;
  /** The plan text for the display buffer (null: DIRECT, or no plan). */
  plan: string | null;
  /** The planning debug log to store (null: planning failed). */
  log: Record<string, unknown> | null;
}

export async function planForTurn(turn: TurnState, deps: AgentDeps, args: { reason?: string; updated_goal?: string }): Promise<PlanChange> {
  const none = { calls: 0, usage: { promptTokens: 0, completionTokens: 0 }, plan: null, log: null };
  const store = await turn.store();
  const todoSession = turn.sessionId;
  let replan: ReplanContext | undefined;
  if (args.reason !== undefined && args.reason.trim().length > 0) {
    replan = {
      reason: args.reason.trim(),
      ...(args.updated_goal ? { updatedGoal: args.updated_goal } : {}),
      todo: await store.state.getTodos(todoSession),
      scratchpad: await store.state.getScratchpad(turn.toolCtx.sessionId),
    };
  }
  let outcome;
  try {
    outcome = await runPlanning({
      llm: deps.llm,
      model: turn.model,
      numCtx: turn.numCtx,
      signal: turn.signal,
      conversation: turn.context,
      task: turn.task,
      tools: turn.toolNames,
      profiles: [...deps.profiles.profiles.keys()],
      isSubagent: turn.isSubagent,
      keepAlive: turn.settings.keepAlive,
      ...(replan ? { replan } : {}),
      onStatus: (phase, message) => turn.emit({ type: 'planning_status', phase, message }),
    });
  } catch (err) {
    if (isAbortError(err) || turn.signal.aborted) throw err;
    if (err instanceof PlanningError) return { ...none, result: { ok: false, output: `planning failed: ${err.message}` } };
    throw err;
  }
  const { calls, promptTokens, completionTokens } = outcome.usage;
  const spent = { calls, usage: { promptTokens, completionTokens } };
  for (const w of outcome.warnings) turn.emit({ type: 'warning', code: w.code, message: w.message });
  const log = { complexity: outcome.complexity, direct: outcome.direct, steps: outcome.steps.length, ...outcome.debug };
  if (outcome.direct) return { ...spent, plan: null, log, result: { ok: true, output: 'DIRECT: this subtask needs no plan; do it now.' } };

  const todos: TodoItem[] = outcome.todoItems.map((text, i) => ({ id: i + 1, text, status: 'pending' }));
  await store.state.setTodos(todoSession, todos);
  turn.emit({ type: 'todo_updated', todos });
  turn.emit({ type: 'plan_ready', complexity: outcome.complexity, plan: outcome.planText, steps: outcome.steps.map((s) => s.text) });
  const result = await followUp(turn, deps, outcome);
  // The model reads the plan in this tool result. As a message of its own it would break the
  // prompt Ollama renders: an assistant message next to the model's next reply is merged into
  // it, dropping that reply's tool calls (template/template.go `collate`), and a user message
  // mid-turn makes qwen3 and gpt-oss templates drop the turn's earlier reasoning (they render
  // thinking only after the last user message), so the server's prompt cache would miss.
  return { ...spent, plan: outcome.planText, log, result: { ...result, output: `${result.output}\n\n${outcome.planText}` } };
}

/** What the plan tool answers: proceed, wait for (or record) a confirmation. */
async function followUp(turn: TurnState, deps: AgentDeps, outcome: { complexity: string; planText: string; followUp: string }): Promise<ToolResult> {
  if (outcome.complexity !== 'complex' || turn.isSubagent) return { ok: true, output: outcome.followUp };
  if (turn.settings.interactive && deps.confirmPlan) {
    const confirmed = await deps.confirmPlan(outcome.planText);
    turn.emit({ type: 'planning_status', phase: confirmed ? 'confirmed' : 'rejected', message: confirmed ? 'The user confirmed the plan.' : 'The user rejected the plan.' });
    return confirmed
      ? { ok: true, output: 'The user confirmed the plan. Proceed with step 1.' }
      : { ok: true, output: 'The user rejected the plan. Stop and ask what to change; do not execute it.' };
  }
  // Nobody can answer in a headless run: proceed, and leave a record that nobody confirmed.
  turn.emit({ type: 'planning_status', phase: 'auto_confirmed', message: 'Complex plan confirmed automatically (headless run: nobody to ask).' });
  return { ok: true, output: 'Plan ready (complex). This run is headless, so the plan is confirmed automatically: proceed with step 1.' };
}
