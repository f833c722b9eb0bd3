/**
 * How a loop ends (SPEC §7.10–11): the run row's final status, the context marker (complete,
 * partial or aborted), the LOOP COMPLETE block with the `{"v":2,"type":"exit",…}` line, and the
 * `loop_complete` event. Completed and aborted runs are final; every other ending is resumable
 * and says how.
 */
import type { AgentEvent } from '../agent/events.js';
import type { Evidence } from './evidence.js';
import type { IndicatorState } from './indicators.js';
import type { ExitSignal } from './exit-signal.js';
import { writeMarker, type MarkerKind } from './markers.js';
import type { LastIteration } from './run-state.js';
import type { LoopEndStatus } from './runner-types.js';
import { exitSignalLine, renderLoopComplete } from './status-block.js';
import type { Task } from './task-file.js';

/** A decided ending. */
export interface Ending {
  status: LoopEndStatus;
  reason: string;
  /** One line for the user (null for a success). */
  message: string | null;
  /** Marker to write (null: none). */
  marker: MarkerKind | null;
}

/** True for endings a run can be resumed from. */
export function isResumable(status: LoopEndStatus): boolean {
  return status !== 'completed' && status !== 'aborted';
}

/** The command that continues a stopped run, chosen for why it stopped. */
export function resumeCommand(runId: string, reason: string): string {
  if (reason === 'max_iterations') return `navi loop --resume ${runId} --extend 3`;
  if (reason === 'max_tokens') return `navi loop --resume ${runId} --max-tokens N`;
  if (reason === 'deadline') return `navi loop --resume ${runId} --deadline 1h`;
  return `navi loop --resume ${runId}`;
}

/** Most file names listed in a summary; the marker is a note, not a diff. */
const MAX_LISTED_FILES = 10;

/** What a run did, one bullet each, from the last iteration's evidence. */
export function summaryLines(e: Evidence | null, signal: ExitSignal | null): string[] {
  if (e === null) return [];
  const out: string[] = [];
  if (signal !== null && signal.reason !== '') out.push(`Model's report: ${signal.reason}`);
  const files = e.filesChangedSinceStart;
  if (files.length > 0) {
    const shown = files.slice(0, MAX_LISTED_FILES).join(', ');
    out.push(`Files changed since start: ${shown}${files.length > MAX_LISTED_FILES ? ` (+${files.length - MAX_LISTED_FILES} more)` : ''}`);
  }
  if (e.gitRepo) out.push(`Commits since start: ${e.commitsSinceStart}${e.uncommittedTrackedChanges ? ' (uncommitted changes remain)' : ''}`);
  for (const c of e.checks) {
    const verdict = c.exitCode === 0 ? 'passed' : c.timedOut === true ? 'timed out' : `failed (exit ${c.exitCode ?? 'none'})`;
    out.push(`Check ${c.name}: ${verdict} in ${c.durationMs} ms`);
  }
  return out;
}

/** What the ending needs to know about the run. */
export interface EndContext {
  runId: string;
  cwd: string;
  task: Task;
  iteration: number;
  maxIterations: number;
  last: LastIteration | null;
  evidence: Evidence | null;
  signal: ExitSignal | null;
  requireExplicitSignal: boolean;
  now: Date;
}

/**
 * The indicators as the ending shows them: the last iteration's, with "Marker created" met
 * once the ending wrote its marker (evidence was gathered before it existed).
 */
export function endingIndicators(indicators: IndicatorState, markerWritten: boolean): IndicatorState {
  if (!markerWritten || indicators.values.marker_created !== false) return indicators;
  return { ...indicators, values: { ...indicators.values, marker_created: true } };
}

/** Writes the ending's marker; returns its path, or a warning when it could not be written. */
export async function endingMarker(end: Ending, ctx: EndContext): Promise<{ path: string | null; warning?: string }> {
  if (end.marker === null || ctx.last === null) return { path: null };
  try {
    const path = await writeMarker(ctx.cwd, {
      kind: end.marker,
      name: ctx.task.name,
      task: ctx.task.prompt,
      date: ctx.now,
      runId: ctx.runId,
      iteration: ctx.iteration,
      maxIterations: ctx.maxIterations,
      phase: ctx.last.phase,
      stateHash: ctx.last.hash,
      indicators: endingIndicators(ctx.last.indicators, true),
      reason: end.message === null ? end.reason : `${end.reason}: ${end.message}`,
      summary: summaryLines(ctx.evidence, ctx.signal),
    });
    return { path };
  } catch (err) {
    return { path: null, warning: `could not write the ${end.marker} marker: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** The `loop_complete` event of an ending. */
export function loopCompleteEvent(end: Ending, ctx: EndContext, marker: string | null): AgentEvent {
  const resumable = isResumable(end.status);
  const ev: Extract<AgentEvent, { type: 'loop_complete' }> = {
    type: 'loop_complete',
    status: end.status,
    reason: end.reason,
    iterations: ctx.iteration,
    max_iterations: ctx.maxIterations,
    phase: ctx.last?.phase ?? null,
    state_hash: ctx.last?.hash ?? null,
    // As the LOOP COMPLETE block shows them: the marker the ending wrote counts (issue 18, item 15).
    indicators: ctx.last === null ? null : { ...endingIndicators(ctx.last.indicators, marker !== null).values },
    marker,
    resumable,
  };
  if (resumable) ev.resume_command = resumeCommand(ctx.runId, end.reason);
  if (end.status === 'completed' && ctx.last !== null) {
    const why = ctx.signal !== null && ctx.signal.exit && ctx.signal.reason !== '' ? ctx.signal.reason : end.reason === 'user_completed' ? 'Accepted by the user at max iterations' : 'All criteria met';
    ev.exit_line = exitSignalLine(why);
    ev.block = renderLoopComplete({
      task: ctx.task.prompt,
      iterations: ctx.iteration,
      maxIterations: ctx.maxIterations,
      phase: ctx.last.phase,
      indicators: endingIndicators(ctx.last.indicators, marker !== null),
      exitSignal: ctx.signal?.exit === true,
      requireExplicitSignal: ctx.requireExplicitSignal,
      summary: [...summaryLines(ctx.evidence, ctx.signal), ...(marker !== null ? [`Marker: ${marker}`] : [])],
    });
  }
  return ev;
}
