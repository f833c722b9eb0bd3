/**
 * How a worker retries a clone or fetch that failed (issue 35): a few tries with a growing pause
 * (a flaky network, a Git server restarting), then the job fails with git's own reason — not a
 * job bounced between workers every few seconds. Pure, table-tested; the clock is a parameter.
 */

export interface GitRetryPolicy {
  /** Tries in all (the first included). */
  tries: number;
  /** The pause after the first failure; each next one doubles. */
  firstDelayMs: number;
  /** No pause is longer. */
  maxDelayMs: number;
}

/** The pauses between tries: `tries - 1` of them, doubling from `firstDelayMs`, capped. */
export function retryDelays(policy: GitRetryPolicy): number[] {
  const out: number[] = [];
  for (let i = 0; i < Math.max(0, policy.tries - 1); i++) out.push(Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** i));
  return out;
}

/**
 * Runs `attempt` until it succeeds or the tries are spent (then throws the last error). `wait`
 * pauses between tries and may throw to stop early (the worker is stopping).
 */
export async function withRetries<T>(policy: GitRetryPolicy, attempt: () => Promise<T>, wait: (ms: number) => Promise<void>): Promise<T> {
  const delays = retryDelays(policy);
  for (let i = 0; ; i++) {
    try {
      return await attempt();
    } catch (err) {
      const delay = delays[i];
      if (delay === undefined) throw err;
      await wait(delay);
    }
  }
}
