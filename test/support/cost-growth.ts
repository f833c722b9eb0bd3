/**
 * For tests whose point is "linear, not quadratic": how an operation's cost grows with its input,
 * as a ratio — never a duration (durations belong to `npm run bench`).
 *
 * The same amount of input is processed twice: as one piece of size `large`, and as `large /
 * small` pieces of size `small`. Linear work costs about the same both ways (ratio ~1); work that
 * grows with the square costs `large / small` times more in one piece. The cost is this process's
 * CPU time (`process.cpuUsage`: a process hogging another core barely moves it), the least of
 * several interleaved runs (a GC pause or a preemption in one run does not count). Keep `large`
 * moderate (hundreds of KB): huge strings cost more per byte (caches, GC) even when linear.
 */

export interface CostGrowth {
  /** CPU time of the one large piece over that of the same input in small pieces. */
  ratio: number;
  smallMs: number;
  largeMs: number;
  /** For the assertion message. */
  text: string;
}

export interface CostGrowthOptions {
  /** Measurements of each size; the least counts. Default 5. */
  runs?: number;
  /**
   * Default true: the small size runs `large / small` times per measurement (the same input in
   * pieces). False: once, for sizes that are not amounts of input (say, nesting levels).
   */
  sameInput?: boolean;
}

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

async function costOf(run: (size: number) => unknown, size: number, times: number): Promise<number> {
  const started = cpuMs();
  for (let i = 0; i < times; i++) await run(size);
  return cpuMs() - started;
}

export async function costGrowth(run: (size: number) => unknown, small: number, large: number, opts: CostGrowthOptions = {}): Promise<CostGrowth> {
  const runs = opts.runs ?? 5;
  const pieces = opts.sameInput === false ? 1 : Math.round(large / small);
  await run(small); // warm-up: code compiled, caches filled
  await run(large);
  let smallMs = Number.POSITIVE_INFINITY;
  let largeMs = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i++) {
    smallMs = Math.min(smallMs, await costOf(run, small, pieces));
    largeMs = Math.min(largeMs, await costOf(run, large, 1));
  }
  const ratio = largeMs / Math.max(smallMs, 0.001);
  const what =
    pieces === 1
      ? `size ${small}: ${smallMs.toFixed(1)} ms CPU, size ${large}: ${largeMs.toFixed(1)} ms CPU`
      : `${pieces} × size ${small}: ${smallMs.toFixed(1)} ms CPU, 1 × size ${large}: ${largeMs.toFixed(1)} ms CPU (linear ~1, quadratic ~${pieces})`;
  return { ratio, smallMs, largeMs, text: `${what}; ratio ${ratio.toFixed(2)}` };
}
