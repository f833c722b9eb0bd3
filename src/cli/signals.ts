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
  dispose(): void;
}

/**
 * `onFirst` runs on the first signal (say "stopping…"); `onForce` runs synchronously just before
 * a second SIGINT exits, so json modes can still write a final `result`.
 */
export function installStopHandlers(onFirst?: (sig: NodeJS.Signals) => void, onForce?: () => void): StopHandle {
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
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    signal: controller.signal,
    get stoppedBy() {
      return stoppedBy;
    },
    dispose() {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}
