/**
 * Cooperative stop (SPEC §8): the first SIGINT or SIGTERM aborts one AbortSignal that flows
 * through the model call, tools and the loop, so everything so far is saved and the command
 * exits 130. A second signal (SIGINT or SIGTERM) exits at once.
 */
import { EXIT } from '../errors.js';

export interface StopHandle {
  signal: AbortSignal;
  /** Which signal stopped the run, if any. */
  readonly stoppedBy: NodeJS.Signals | null;
  /**
   * The command's outcome is written and everything is saved: from now on SIGINT or SIGTERM exit
   * at once with `exitCode` (what is left is closing the store and flushing stdout). Without
   * this, a signal in that last moment would kill navi with no exit code of its own. Returns
   * `exitCode`, for `return stop.finish(code)`.
   */
  finish(exitCode: number): number;
  /** Removes the handlers (another command's take over). Only the first of these two counts. */
  dispose(): void;
}

/**
 * `onFirst` runs on the first signal (say "stopping…"); `onForce` runs synchronously just before
 * a second SIGINT exits, so json modes can still write a final `result`. `listen: false` (a
 * command run in a test's process, which is not its own) installs nothing: the handle's signal
 * then never aborts, and the process's signals stay the process's.
 */
export function installStopHandlers(onFirst?: (sig: NodeJS.Signals) => void, onForce?: () => void, listen = true): StopHandle {
  const controller = new AbortController();
  let stoppedBy: NodeJS.Signals | null = null;
  const handler = (sig: NodeJS.Signals): void => {
    if (stoppedBy !== null) {
      // A second signal of either kind means "now" (a second Ctrl-C, a supervisor repeating SIGTERM).
      try {
        onForce?.();
      } finally {
        process.exit(EXIT.interrupted);
      }
    }
    stoppedBy = sig;
    onFirst?.(sig);
    controller.abort(new DOMException(`stopped by ${sig}`, 'AbortError'));
  };
  let current: (sig: NodeJS.Signals) => void = handler;
  const swap = (next: ((sig: NodeJS.Signals) => void) | null): void => {
    if (!listen) return;
    process.off('SIGINT', current);
    process.off('SIGTERM', current);
    if (next === null) return;
    current = next;
    process.on('SIGINT', current);
    process.on('SIGTERM', current);
  };
  if (listen) {
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
  }
  let settled = false;
  return {
    signal: controller.signal,
    get stoppedBy() {
      return stoppedBy;
    },
    finish(exitCode) {
      if (!settled) {
        settled = true;
        swap(() => process.exit(exitCode));
      }
      return exitCode;
    },
    dispose() {
      settled = true;
      swap(null);
    },
  };
}
