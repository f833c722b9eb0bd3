/**
 * Waiting on the model or a tool without going silent: while a promise is pending, side
 * events (from tools and sub-agents) are yielded as they arrive, and a heartbeat every
 * `intervalMs` of silence lets unattended callers tell "prefilling" from "hung".
 */
import type { AgentEvent } from './events.js';

/** Events pushed from outside the generator (tool side events, sub-agent events). */
export class EventChannel {
  private queue: AgentEvent[] = [];
  private wake: (() => void) | null = null;

  push(event: AgentEvent): void {
    this.queue.push(event);
    this.wake?.();
  }

  take(): AgentEvent[] {
    const out = this.queue;
    this.queue = [];
    return out;
  }

  /** Resolves when something is pushed (or immediately when the queue is non-empty). */
  nextPush(): Promise<void> {
    if (this.queue.length > 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.wake = () => {
        this.wake = null;
        resolve();
      };
    });
  }
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/**
 * Yields channel events and heartbeats until `work` settles, then returns its value (or throws
 * its error). `now` is injectable for tests.
 */
export async function* waitWithHeartbeat<T>(
  work: Promise<T>,
  opts: { channel: EventChannel; intervalMs: number; waitingFor: 'model' | 'tool'; now?: () => number },
): AsyncGenerator<AgentEvent, T> {
  const now = opts.now ?? Date.now;
  const started = now();
  let lastEmit = started;
  let settled: Settled<T> | null = null;
  const done = work.then(
    (value) => {
      settled = { ok: true, value };
    },
    (error: unknown) => {
      settled = { ok: false, error };
    },
  );
  for (;;) {
    for (const ev of opts.channel.take()) {
      lastEmit = now();
      yield ev;
    }
    if (settled !== null) break;
    let timer: NodeJS.Timeout | undefined;
    const tick = new Promise<'tick'>((resolve) => {
      timer = setTimeout(() => resolve('tick'), Math.max(0, lastEmit + opts.intervalMs - now()));
    });
    const woke = await Promise.race([done.then(() => 'done' as const), opts.channel.nextPush().then(() => 'push' as const), tick]);
    clearTimeout(timer);
    if (woke === 'tick' && settled === null) {
      lastEmit = now();
      yield { type: 'heartbeat', waiting_for: opts.waitingFor, elapsed_ms: Math.round(lastEmit - started) };
    }
  }
  for (const ev of opts.channel.take()) yield ev;
  const result = settled as Settled<T> | null;
  if (result === null || !result.ok) throw result?.error;
  return result.value;
}
