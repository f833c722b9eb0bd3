/**
 * Database writes in the order they happened, without making the agent loop wait on each
 * one. The store may still be opening (PGlite opens in parallel with the first model call);
 * writes queue behind it. `flush()` is awaited before every model call after the first and
 * at the end of a turn, so at most the message in flight can be lost in a crash.
 */
import { StorageError } from '../errors.js';
import type { Store } from '../store/types.js';

/** After a stop, how long a flush may wait for the database before giving up. */
export const STOP_FLUSH_GRACE_MS = 2_000;

/**
 * After a stop, how long a store that is still opening may take before the grace above starts.
 * Opening is bounded work (PGlite reading its directory, a PostgreSQL connect with its own
 * timeout) that takes seconds on a loaded machine; giving up on it would lose the prompt.
 */
export const STOP_OPEN_GRACE_MS = 15_000;

export class SerialWriter {
  private tail: Promise<void>;
  private failure: Error | null = null;
  /** Rejects STOP_FLUSH_GRACE_MS after the stop (once the store is open): a stuck write must not hold a stop. */
  private readonly stopDeadline: Promise<never> | null;

  constructor(
    private readonly store: Promise<Store>,
    stop?: AbortSignal,
  ) {
    this.tail = store.then(
      () => undefined,
      (err: unknown) => {
        this.failure ??= asError(err);
      },
    );
    const opened = store.then(
      () => undefined,
      () => undefined,
    );
    this.stopDeadline = stop
      ? new Promise<never>((_, reject) => {
          const grace = (): void => {
            setTimeout(() => {
              this.failure ??= new StorageError(
                'store_timeout',
                `the database did not finish saving within ${STOP_FLUSH_GRACE_MS / 1000} s of the stop; the last messages may be missing`,
              );
              reject(this.failure);
            }, STOP_FLUSH_GRACE_MS).unref();
          };
          const arm = (): void => {
            let openTimer: NodeJS.Timeout | undefined;
            const bounded = new Promise<void>((resolve) => {
              openTimer = setTimeout(resolve, STOP_OPEN_GRACE_MS);
              openTimer.unref();
            });
            void Promise.race([opened, bounded]).then(() => {
              clearTimeout(openTimer);
              grace();
            });
          };
          if (stop.aborted) arm();
          else stop.addEventListener('abort', arm, { once: true });
        })
      : null;
    this.stopDeadline?.catch(() => undefined);
  }

  /** Writes kept back by `hold`, in order; null when none are. */
  private held: Array<(store: Store) => Promise<unknown>> | null = null;

  /**
   * Keeps every write from now on back until `release` (or `flush`), or drops them on
   * `discard`: a new session is stored only once the model answered, so a run that never
   * reached the model (Ollama down, model not pulled) leaves no session behind.
   */
  hold(): void {
    this.held ??= [];
  }

  /** True while writes are held back (`hold` until `release`, `discard` or `flush`). */
  get holding(): boolean {
    return this.held !== null;
  }

  /** Queues the held writes, in order; later writes queue directly. */
  release(): void {
    const held = this.held;
    this.held = null;
    for (const write of held ?? []) this.enqueue(write);
  }

  /** Drops the held writes (nothing of them was stored); later writes queue directly. */
  discard(): void {
    this.held = null;
  }

  /** Queues a write; it runs after every earlier one. Failures surface at the next flush. */
  enqueue(write: (store: Store) => Promise<unknown>): void {
    if (this.held !== null) {
      this.held.push(write);
      return;
    }
    this.tail = this.tail.then(async () => {
      if (this.failure !== null) return;
      try {
        await write(await this.store);
      } catch (err) {
        this.failure = asError(err);
      }
    });
  }

  /** Throws a failure already known (e.g. the store could not be opened) without waiting. */
  throwIfFailed(): void {
    if (this.failure !== null) throw this.failure;
  }

  /** Waits for every queued write, held ones included (at most a short grace after a stop); throws the first failure. */
  async flush(): Promise<void> {
    this.release();
    await (this.stopDeadline ? Promise.race([this.tail, this.stopDeadline]) : this.tail);
    if (this.failure !== null) throw this.failure;
  }
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(typeof err === 'string' ? err : 'database write failed');
}
