/**
 * The `plan` tool's side of the turn (seed 000 "Planning"): runs the planning pipeline, puts
 * the plan into the todo list and into the tool result the model reads (and the display buffer
 * as an assistant message marked `is_plan`), emits `planning_status` / `plan_ready`, keeps the planning debug
 * log, and decides the follow-up: complex plans wait for a person's confirmation when one
 * can answer; headless runs proceed and say so in an event.
 */
import { isAbortError } from '../../errors.js';
import type { ToolResult, TodoItem } from '../../tools/types.js';
import type { AgentDeps } from '../agent-types.js';
import { PlanningError } from './planning-error.js';
import { runPlanning, type ReplanContext } from './plan-runner.js';
import type { Turn } from '../turn.js';

export async function planForTurn(turn: Turn, deps: AgentDeps, args: { reason?: string; updated_goal?: string }): Promise<ToolResult> {
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
      signal: turn.opts.signal,
      conversation: turn.context,
      task: turn.task,
      tools: turn.toolNames,
      profiles: [...deps.profiles.profiles.keys()],
      isSubagent: turn.isSubagent,
      keepAlive: turn.opts.keepAlive,
      ...(replan ? { replan } : {}),
      onStatus: (phase, message) => turn.emit({ type: 'planning_status', phase, message }),
    });
  } catch (err) {
    if (isAbortError(err) || turn.opts.signal.aborted) throw err;
    if (err instanceof PlanningError) return { ok: false, output: `planning failed: ${err.message}` };
    throw err;
  }
  turn.recordServiceCalls(outcome.usage.calls, outcome.usage);
  for (const w of outcome.warnings) turn.emit({ type: 'warning', code: w.code, message: w.message });
  turn.writer.enqueue((s) =>
    s.planningLogs.append(turn.sessionId, { complexity: outcome.complexity, direct: outcome.direct, steps: outcome.steps.length, ...outcome.debug }),
  );
  if (outcome.direct) return { ok: true, output: 'DIRECT: this subtask needs no plan; do it now.' };

  const todos: TodoItem[] = outcome.todoItems.map((text, i) => ({ id: i + 1, text, status: 'pending' }));
  await store.state.setTodos(todoSession, todos);
  turn.emit({ type: 'todo_updated', todos });
  turn.emit({ type: 'plan_ready', complexity: outcome.complexity, plan: outcome.planText, steps: outcome.steps.map((s) => s.text) });
  turn.offerPlan(outcome.planText);
  const result = await followUp(turn, deps, outcome);
  // The model reads the plan in this tool result. As a message of its own it would break the
  // prompt Ollama renders: an assistant message next to the model's next reply is merged into
  // it, dropping that reply's tool calls (template/template.go `collate`), and a user message
  // mid-turn makes qwen3 and gpt-oss templates drop the turn's earlier reasoning (they render
  // thinking only after the last user message), so the server's prompt cache would miss.
  return { ...result, output: `${result.output}\n\n${outcome.planText}` };
}

/** What the plan tool answers: proceed, wait for (or record) a confirmation. */
async function followUp(turn: Turn, deps: AgentDeps, outcome: { complexity: string; planText: string; followUp: string }): Promise<ToolResult> {
  if (outcome.complexity !== 'complex' || turn.isSubagent) return { ok: true, output: outcome.followUp };
  if (turn.opts.interactive && deps.confirmPlan) {
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
