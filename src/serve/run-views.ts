/**
 * Loop runs and their committed iterations as the API shows them: snake_case, ISO times, the
 * NAVIGATOR_STATUS fields read back from each iteration's stored block, and who runs the run
 * (this server, or another navi judged alive by its heartbeat, src/loop/ownership.ts).
 */
import { hostname } from 'node:os';
import { ownerOf, ownerReport, pidAlive } from '../loop/ownership.js';
import type { LoopIterationRecord, LoopRunRecord } from '../store/types.js';
import type { PendingQuestion } from './server-decisions.js';

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

/** `Phase: IMPL` → `phase: "IMPL"`, indented lines too (`  Heuristics: 2/5 (need 2+)`); the first of a key wins. */
export function statusBlockFields(block: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of block.split('\n')) {
    const m = /^\s*([A-Za-z][A-Za-z_ ]*?)\s*:\s*(.*?)\s*$/.exec(line);
    if (m === null || m[1] === undefined || m[2] === undefined || m[2] === '') continue;
    const key = m[1].toLowerCase().replace(/\s+/g, '_');
    if (!(key in fields)) fields[key] = m[2];
  }
  return fields;
}

/** The task prompt of a stored run (`task` is the task as loaded). */
function taskPrompt(task: unknown): string {
  if (typeof task === 'object' && task !== null && typeof (task as { prompt?: unknown }).prompt === 'string') return (task as { prompt: string }).prompt;
  return '';
}

export interface RunContext {
  /** Runs this server drives: their pending question. */
  ownPending: (id: string) => PendingQuestion | null | undefined;
  now: number;
}

export function runSummaryView(r: LoopRunRecord, ctx: RunContext): Record<string, unknown> {
  const own = ctx.ownPending(r.id);
  const report = ownerReport(r.status, { owner: ownerOf(r.config), updatedAt: r.updatedAt, me: { pid: process.pid, host: hostname() }, now: ctx.now, isAlive: pidAlive });
  return {
    id: r.id,
    session_id: r.sessionId,
    task_name: r.taskName,
    task: taskPrompt(r.task),
    status: r.status,
    reason: r.reason,
    alive: own !== undefined && r.status === 'running' ? true : report.alive,
    owner: own !== undefined ? 'this server' : report.text,
    iteration: r.iteration,
    max_iterations: r.maxIterations,
    usage: { prompt_tokens: r.promptTokens, completion_tokens: r.completionTokens },
    max_tokens: r.maxTokens,
    deadline_at: iso(r.deadlineAt),
    started_at: r.startedAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
    finished_at: iso(r.finishedAt),
    pending_decision: own ?? null,
  };
}

export function iterationView(it: LoopIterationRecord): Record<string, unknown> {
  return {
    iteration: it.iteration,
    phase: it.phase,
    indicators: it.indicators,
    state_hash: it.stateHash,
    gate_decision: it.gateDecision,
    gate_reason: it.gateReason,
    exit_signal: it.exitSignal,
    status_block: it.statusBlock,
    status: statusBlockFields(it.statusBlock),
    decision: it.decision,
    usage: { prompt_tokens: it.promptTokens, completion_tokens: it.completionTokens },
    duration_ms: it.durationMs,
    started_at: it.startedAt.toISOString(),
    finished_at: it.finishedAt.toISOString(),
  };
}
