/**
 * Timers that may wait longer than Node's. `setTimeout` holds its delay in a signed 32-bit
 * integer: anything above 2^31-1 ms (~24.8 days) fires after 1 ms, with a TimeoutOverflowWarning.
 * A 30-day deadline or a long check timeout must not end at once.
 */

/** Largest delay a single Node timer honours. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A pending long timeout; `clear` cancels it (safe to call more than once, or after it fired). */
export interface LongTimeout {
  clear(): void;
}

/**
 * Calls `callback` once after `ms` milliseconds, however long that is: a delay beyond
 * MAX_TIMER_MS is waited for in steps. `Infinity` never fires; a negative or NaN delay fires as
 * soon as possible, as setTimeout does. `unref` lets the process exit while it is pending.
 */
export function setLongTimeout(callback: () => void, ms: number, opts: { unref?: boolean } = {}): LongTimeout {
  let timer: NodeJS.Timeout | undefined;
  let cleared = false;
  const due = performance.now() + (ms > 0 ? ms : 0);
  const arm = (): void => {
    if (cleared || ms === Infinity) return;
    const left = due - performance.now();
    if (left > MAX_TIMER_MS) {
      timer = setTimeout(arm, MAX_TIMER_MS);
    } else {
      timer = setTimeout(() => {
        cleared = true;
        callback();
      }, Math.max(0, left));
    }
    if (opts.unref === true) timer.unref();
  };
  arm();
  return {
    clear: () => {
      cleared = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
