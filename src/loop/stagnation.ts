/**
 * Stagnation over the state-hash history (SPEC §7.8). navigator's rule: the same hash for
 * `threshold` iterations in a row. navi adds oscillation: a loop flipping between two or three
 * states (break a test, fix it, break it again) never repeats one hash twice in a row, yet makes
 * no progress either.
 */

/** Why the loop counts as stuck. */
export type StagnationReason = 'same_state' | 'oscillation';

/** The stagnation verdict for the latest iteration. */
export interface StagnationResult {
  /** The loop is stuck and must be handled (pause, diversify or abort). */
  stagnant: boolean;
  /** Which rule fired; null when not stagnant. */
  reason: StagnationReason | null;
  /**
   * Iterations in the stuck pattern: the consecutive-equal count (shown as `Stagnation C/T`), or
   * for oscillation the length of the repeating tail.
   */
  count: number;
  /** For oscillation: the cycle length (2 or 3). */
  period?: number;
}

/** Cycle lengths checked for oscillation; longer cycles look like real (if slow) progress. */
const OSCILLATION_PERIODS = [2, 3] as const;

/** Times a cycle must be completed before it counts as oscillation. */
const OSCILLATION_REPEATS = 2;

/** navigator's count_consecutive_same: 1 (the current hash) + equal hashes at the end of `history`. */
export function consecutiveCount(history: readonly string[], current: string): number {
  let count = 1;
  for (let i = history.length - 1; i >= 0 && history[i] === current; i--) count++;
  return count;
}

/** Length of the longest tail of `h` in which every hash equals the one `period` places earlier. */
function periodicTail(h: readonly string[], period: number): number {
  let n = Math.min(period, h.length);
  while (n < h.length && h[h.length - 1 - n] === h[h.length - 1 - n + period]) n++;
  return n;
}

/**
 * Verdict for the latest hash. `history` holds the recorded hashes since the last reset
 * (Continue / diversification), current one last; `threshold` is `stagnation_threshold`.
 * Same-state wins over oscillation: `h h h h` is a plain repeat, not a cycle of period 2.
 */
export function detectStagnation(history: readonly string[], threshold: number): StagnationResult {
  const current = history[history.length - 1];
  if (current === undefined) return { stagnant: false, reason: null, count: 0 };
  const count = consecutiveCount(history.slice(0, -1), current);
  if (count >= threshold) return { stagnant: true, reason: 'same_state', count };
  for (const period of OSCILLATION_PERIODS) {
    const cycle = history.slice(-period);
    // A cycle made of one repeated hash is a same-state run, judged by the threshold above.
    if (cycle.length < period || new Set(cycle).size === 1) continue;
    const tail = periodicTail(history, period);
    if (tail >= period * OSCILLATION_REPEATS) return { stagnant: true, reason: 'oscillation', count: tail, period };
  }
  return { stagnant: false, reason: null, count };
}
