/**
 * Randomness for tests that vary timings on purpose: seeded, and the seed printed, so a failing
 * run can be replayed with `NAVI_TEST_SEED=<seed>`. Without it the seed is the clock (every run
 * explores other moments). mulberry32: tiny, and plenty for picking delays.
 */

export interface SeededRandom {
  readonly seed: number;
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max). */
  int(min: number, max: number): number;
}

/** A generator for `label` (printed with the seed on stderr). */
export function seededRandom(label: string): SeededRandom {
  const seed = Number(process.env.NAVI_TEST_SEED ?? Date.now()) >>> 0;
  process.stderr.write(`[seed] ${label}: NAVI_TEST_SEED=${seed}\n`);
  let state = seed;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return { seed, next, int: (min, max) => min + Math.floor(next() * (max - min)) };
}
