/**
 * Database writes in the order they happened, without making the agent loop wait on each
 * one. The store may still be opening (PGlite opens in parallel with the first model call);
 * writes queue behind it. `flush()` is awaited before every model call after the first and
 * at the end of a turn, so at most the message in flight can be lost in a crash.
 */
import type { Store } from '../store/types.js';

export class SerialWriter {
  private tail: Promise<void>;
  private failure: Error | null = null;

  constructor(private readonly store: Promise<Store>) {
    this.tail = store.then(
      () => undefined,
      (err: unknown) => {
        this.failure ??= asError(err);
      },
    );
  }

  /** Queues a write; it runs after every earlier one. Failures surface at the next flush. */
  enqueue(write: (store: Store) => Promise<unknown>): void {
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

  /** Waits for every queued write; throws the first failure. */
  async flush(): Promise<void> {
    await this.tail;
    if (this.failure !== null) throw this.failure;
  }
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(typeof err === 'string' ? err : 'database write failed');
}
