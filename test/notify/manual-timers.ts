/**
 * A clock the test moves by hand (NotifyTimers): timeouts and sleeps fire only when `advance`
 * passes their due time, so retries, per-try timeouts and the end-of-loop grace are tested
 * without waiting and without asserting durations.
 */
import type { NotifyTimers } from '../../src/notify/timers.js';

export interface ManualTimers extends NotifyTimers {
  /** Moves the clock on by `ms`, firing what falls due (in order), letting promises settle between. */
  advance(ms: number): Promise<void>;
  /** Timers pending. */
  pending(): number;
  /** Every sleep asked for, in order (ms). */
  sleeps: number[];
}

export function manualTimers(): ManualTimers {
  let now = 0;
  let nextId = 1;
  const due = new Map<number, { at: number; fn: () => void }>();
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 20; i++) await Promise.resolve();
  };
  const timers: ManualTimers = {
    sleeps: [],
    setTimeout(fn, ms) {
      const id = nextId++;
      due.set(id, { at: now + ms, fn });
      return id;
    },
    clearTimeout(handle) {
      due.delete(handle as number);
    },
    sleep(ms, signal) {
      timers.sleeps.push(ms);
      return new Promise((resolve) => {
        if (signal.aborted) return resolve();
        const id = timers.setTimeout(resolve, ms) as number;
        signal.addEventListener('abort', () => {
          due.delete(id);
          resolve();
        }, { once: true });
      });
    },
    async advance(ms) {
      const end = now + ms;
      await settle();
      for (;;) {
        const next = [...due.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
        if (next === undefined) break;
        due.delete(next[0]);
        now = next[1].at;
        next[1].fn();
        await settle();
      }
      now = end;
      await settle();
    },
    pending: () => due.size,
  };
  return timers;
}
