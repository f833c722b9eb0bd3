/**
 * A loop run as the CI reports see it (`junit.ts`, `markdown.ts`, `annotations.ts`): built from
 * the stored run and its committed iterations, so a report written at the end of `navi loop`
 * and one rendered later by `navi runs show ID --format …` are the same. Pure: no I/O.
 */
import type { LoopIterationRecord, LoopRunRecord, LoopRunStatus } from '../store/loop-run-types.js';
import { isRecord } from '../util/guards.js';

/** One of the task's checks in one iteration. */
export interface CheckReport {
  name: string;
  /** null: it did not finish (timed out, killed, could not start). */
  exitCode: number | null;
  durationMs: number;
  timedOut: boolean;
  /** The end of its output (what a reader needs to see why it failed). */
  outputTail: string;
}

export interface IterationReport {
  iteration: number;
  phase: string;
  stateHash: string;
  /** `exit` | `continue` | `blocked`; null when the iteration ended before the gate. */
  gateDecision: string | null;
  gateReason: string | null;
  checks: CheckReport[];
  /** Indicator name → true / false / "skipped". */
  indicators: Record<string, boolean | 'skipped'>;
  statusBlock: string;
  promptTokens: number;
  completionTokens: number;
  durationMs: number;
  startedAt: Date;
}

export interface RunReport {
  runId: string;
  taskName: string;
  status: LoopRunStatus;
  reason: string | null;
  /** The command's exit code (SPEC §4); null while the run is still running. */
  exitCode: number | null;
  iteration: number;
  maxIterations: number;
  iterations: IterationReport[];
  /** The last committed iteration's indicators; empty before the first. */
  indicators: Record<string, boolean | 'skipped'>;
  promptTokens: number;
  completionTokens: number;
  /** Start to finish (or to the last update while unfinished). */
  durationMs: number;
  startedAt: Date;
  finishedAt: Date | null;
  /**
   * What ended the command when the stored run does not say it (a replay mismatch and its
   * diff, a database failure): known only to the report written as `navi loop` ends.
   */
  error?: string;
}

/** The exit code `navi loop` ends with for each final status (SPEC §4). */
export const EXIT_BY_STATUS: Readonly<Record<LoopRunStatus, number | null>> = {
  completed: 0,
  incomplete: 3,
  aborted: 4,
  budget_exhausted: 5,
  interrupted: 130,
  failed: 1,
  running: null,
};

function checksOf(evidence: unknown): CheckReport[] {
  if (!isRecord(evidence) || !Array.isArray(evidence.checks)) return [];
  const out: CheckReport[] = [];
  for (const c of evidence.checks as unknown[]) {
    if (!isRecord(c) || typeof c.name !== 'string') continue;
    out.push({
      name: c.name,
      exitCode: typeof c.exit_code === 'number' ? c.exit_code : null,
      durationMs: typeof c.duration_ms === 'number' ? c.duration_ms : 0,
      timedOut: c.timed_out === true,
      outputTail: typeof c.output_tail === 'string' ? c.output_tail : '',
    });
  }
  return out;
}

function indicatorsOf(value: unknown): Record<string, boolean | 'skipped'> {
  const out: Record<string, boolean | 'skipped'> = {};
  if (!isRecord(value)) return out;
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === 'boolean' || v === 'skipped') out[k] = v;
  }
  return out;
}

/**
 * The report of a stored run. `exitCode`: the code the command really ended with, when known
 * (a failed run may have ended with 2 or 75); otherwise the status decides.
 */
export function buildRunReport(run: LoopRunRecord, iterations: readonly LoopIterationRecord[], exitCode?: number): RunReport {
  const its: IterationReport[] = iterations.map((it) => ({
    iteration: it.iteration,
    phase: it.phase,
    stateHash: it.stateHash,
    gateDecision: it.gateDecision,
    gateReason: it.gateReason,
    checks: checksOf(it.evidence),
    indicators: indicatorsOf(it.indicators),
    statusBlock: it.statusBlock,
    promptTokens: it.promptTokens,
    completionTokens: it.completionTokens,
    durationMs: it.durationMs,
    startedAt: it.startedAt,
  }));
  const end = run.finishedAt ?? run.updatedAt;
  return {
    runId: run.id,
    taskName: run.taskName,
    status: run.status,
    reason: run.reason,
    exitCode: exitCode ?? EXIT_BY_STATUS[run.status],
    iteration: run.iteration,
    maxIterations: run.maxIterations,
    iterations: its,
    indicators: its.at(-1)?.indicators ?? {},
    promptTokens: run.promptTokens,
    completionTokens: run.completionTokens,
    durationMs: Math.max(0, end.getTime() - run.startedAt.getTime()),
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
  };
}

/** Why the run did not pass the exit gate, in one line (null when it completed). */
export function gateFailure(report: RunReport): string | null {
  const last = report.iterations.at(-1);
  if (report.error !== undefined) {
    // The command failed although the stored run may say completed (a replay that mismatched after the gate).
    const status = report.status === 'completed' || report.status === 'running' ? 'failed' : report.status;
    const gate = last?.gateReason ? `; the exit gate had said: ${last.gateReason}` : '';
    return `${status} (${report.reason ?? 'error'}): ${report.error}${gate}`;
  }
  if (report.status === 'completed') return null;
  const why = report.reason ?? report.status;
  if (last?.gateReason) return `${report.status} (${why}): the exit gate said: ${last.gateReason}`;
  return `${report.status} (${why})${report.iterations.length === 0 ? ': no iteration was committed' : ''}`;
}

/** Seconds with three decimals, as JUnit reporters read `time` (no thousands separators). */
export function seconds(ms: number): string {
  return (Math.max(0, ms) / 1000).toFixed(3);
}

/** `1 h 02 min`, `3 min 05 s`, `4.2 s`: how long, for people. */
export function humanDuration(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const totalS = Math.round(s);
  const h = Math.floor(totalS / 3600);
  const m = Math.floor((totalS % 3600) / 60);
  const rest = totalS % 60;
  if (h > 0) return `${h} h ${String(m).padStart(2, '0')} min`;
  return `${m} min ${String(rest).padStart(2, '0')} s`;
}
