/**
 * What a worker does with a job once its `navi loop` process ended (pure, table-tested): the
 * exit code (SPEC §4) and why the worker stopped it decide between done, failed for good, and
 * handed back for another worker.
 */

export type StopCause = 'none' | 'shutdown' | 'lease_lost';

export type JobVerdict =
  | { kind: 'complete' }
  /** No retry: the loop itself said no (incomplete, aborted, out of budget, invalid flags). */
  | { kind: 'fail' }
  /** Back to the queue for any worker, after `delaySeconds`. */
  | { kind: 'hand_back'; delaySeconds: number }
  /** Not this worker's any more (cancelled, or taken after its lease ran out): nothing to record. */
  | { kind: 'let_go' };

/** How long a job waits whose run another process still holds (its loop run is alive elsewhere). */
export const BUSY_RETRY_S = 30;
/** How long a job waits after a failure that may pass (Ollama unreachable, a crash). */
export const ERROR_RETRY_S = 10;

export function jobVerdict(input: { exitCode: number | null; cause: StopCause; resultReason: string | null }): JobVerdict {
  if (input.cause === 'lease_lost') return { kind: 'let_go' };
  const code = input.exitCode;
  if (code === 0) return { kind: 'complete' };
  // Stopped by the worker's own SIGTERM, or by a signal from elsewhere: the run is saved; resume it.
  if (input.cause === 'shutdown' || code === null || code === 130) return { kind: 'hand_back', delaySeconds: 0 };
  if (code === 2 && input.resultReason === 'run_busy') return { kind: 'hand_back', delaySeconds: BUSY_RETRY_S };
  if (code === 2 || code === 3 || code === 4 || code === 5) return { kind: 'fail' };
  // 1 (error), 75 (Ollama unavailable), anything else: may pass; the engine's retry limit bounds it.
  return { kind: 'hand_back', delaySeconds: ERROR_RETRY_S };
}
