/**
 * The clock the notifier waits on: Node's, or a test's own, so retries and the end-of-loop grace
 * are tested without waiting. Timeouts are ref'd: the end-of-loop grace must keep navi alive
 * while it waits (every one is bounded, and the grace aborts what is left); a pause between
 * retries is not.
 */

/** Timers the notifier uses. */
export interface NotifyTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  /** Resolves after `ms`, or at once when `signal` fires. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

/** Node's timers. */
export const realTimers: NotifyTimers = {
  setTimeout(fn, ms) {
    return setTimeout(fn, ms);
  },
  clearTimeout(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
  sleep(ms, signal) {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const t = setTimeout(done, ms);
      t.unref();
      function done(): void {
        clearTimeout(t);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
  },
};
