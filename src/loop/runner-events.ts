/**
 * The loop runner's event payloads and endings, built from an iteration's evaluation: the
 * `iteration_status` and `exit_gate` events, the decision record stored with an iteration, and
 * the endings of a stop (interrupt, deadline, per-iteration timeout).
 */
import { hostname } from 'node:os';
import type { AgentEvent, StopReason } from '../agent/events.js';
import type { Decision } from './decisions.js';
import type { Evaluation } from './evaluate.js';
import type { Evidence } from './evidence.js';
import type { Ending } from './runner-end.js';
import type { LoopRunOptions } from './runner-types.js';

/** SIGINT/SIGTERM: the run stops where it is, resumable (no marker: a second Ctrl-C must not wait on files). */
export function interrupted(): Ending {
  return { status: 'interrupted', reason: 'interrupted', message: 'interrupted; the run is saved', marker: null };
}

/**
 * The ending an agent turn forces after its iteration is recorded, whatever the gate said:
 * a conversation that does not fit the window cannot go on (`error`: the turn's message, with
 * the sizes and the fix). Other turn outcomes (a cut-off answer, a model that kept failing) are
 * judged by the evidence like any iteration.
 */
export function turnEnding(stopReason: StopReason, error?: string): Ending | null {
  if (stopReason !== 'context_too_large') return null;
  const message = error ?? 'the conversation does not fit the model context window (num_ctx); raise llm.num_ctx or start a new run';
  return { status: 'failed', reason: 'context_too_large', message, marker: 'partial' };
}

/** The ending of a turn stopped early: interrupt, deadline or the per-iteration timeout. */
export function stopEnding(stop: 'interrupted' | 'deadline' | 'iteration_timeout', opts: LoopRunOptions): Ending {
  if (stop === 'interrupted') return interrupted();
  if (stop === 'deadline') {
    return { status: 'budget_exhausted', reason: 'deadline', message: `deadline reached (${opts.deadlineAt?.toISOString() ?? ''}) during an iteration; it will be redone on resume`, marker: 'partial' };
  }
  return {
    status: 'budget_exhausted',
    reason: 'iteration_timeout',
    message: `the iteration's agent turn took longer than ${Math.round(opts.iterationTimeoutMs / 1000)} s (--iteration-timeout); it will be redone on resume`,
    marker: 'partial',
  };
}

/** A decision as stored with the iteration. */
export function decisionRecord(d: Decision): Record<string, unknown> {
  return { decision: d.decision, source: d.source, ...(d.feedback !== undefined ? { feedback: d.feedback } : {}), ...(d.line !== undefined ? { line: d.line } : {}) };
}

/** The `iteration_status` event: the NAVIGATOR_STATUS fields, the block, and an evidence summary. */
export function statusEvent(ev: Evaluation, e: Evidence): AgentEvent {
  const { iteration: _iteration, ...fields } = ev.status;
  return {
    type: 'iteration_status',
    ...fields,
    skipped: { ...fields.skipped },
    phase_reason: ev.phase.reason,
    evidence: {
      git_repo: e.gitRepo,
      files_read: [...e.filesRead],
      files_changed: [...e.filesChanged],
      commits_since_start: e.commitsSinceStart,
      uncommitted_tracked_changes: e.uncommittedTrackedChanges,
      tool_calls: e.toolCalls,
      test_runs: e.testRuns.map((t) => ({ command: t.command, exit_code: t.exitCode })),
      checks: e.checks.map((c) => ({ name: c.name, exit_code: c.exitCode, duration_ms: c.durationMs, timed_out: c.timedOut === true })),
      ...(e.ticket !== null ? { ticket_exit_code: e.ticket.exitCode } : {}),
    },
    block: ev.block,
  };
}

/** The `exit_gate` event: the gate's verdict and the signal it weighed. */
export function gateEvent(ev: Evaluation): AgentEvent {
  return {
    type: 'exit_gate',
    decision: ev.gate.decision,
    reason: ev.gate.reason,
    heuristics_met: ev.met,
    heuristics_total: ev.total,
    heuristics_needed: ev.gate.needed,
    exit_signal: ev.signal?.exit === true,
    signal:
      ev.signal === null
        ? null
        : { source: ev.signal.source, reason: ev.signal.reason, accepted: ev.signal.exit, ...(ev.signal.rejected !== undefined ? { rejected: ev.signal.rejected } : {}) },
    ...(ev.gate.feedback !== undefined ? { feedback: ev.gate.feedback } : {}),
  };
}

/** This process as a run owner. */
export function currentOwner(now: number): { pid: number; host: string; since: string } {
  return { pid: process.pid, host: hostname(), since: new Date(now).toISOString() };
}
