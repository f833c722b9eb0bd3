/**
 * The serial writer's stop rules: after a stop, a store that is still opening is waited for
 * (bounded), and only then does the short grace for stuck writes start — so a stop during a
 * slow PGlite open on a loaded machine still saves the prompt instead of losing it.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { STOP_FLUSH_GRACE_MS, STOP_OPEN_GRACE_MS, SerialWriter } from '../../src/agent/serial-writer.js';
import type { Store } from '../../src/store/types.js';

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const fakeStore = {} as Store;

describe('SerialWriter after a stop', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('waits for a store that is still opening, then lands the queued writes', async () => {
    vi.useFakeTimers();
    const open = deferred<Store>();
    const stop = new AbortController();
    const writer = new SerialWriter(open.promise, stop.signal);
    const written: string[] = [];
    writer.enqueue(() => Promise.resolve(void written.push('prompt')));
    stop.abort();
    const flushed = writer.flush();
    await vi.advanceTimersByTimeAsync(STOP_FLUSH_GRACE_MS * 2);
    open.resolve(fakeStore);
    await vi.advanceTimersByTimeAsync(1);
    await expect(flushed).resolves.toBeUndefined();
    expect(written).toEqual(['prompt']);
  });

  it('gives up on a write stuck after the store opened, STOP_FLUSH_GRACE_MS after the stop', async () => {
    vi.useFakeTimers();
    const stop = new AbortController();
    const writer = new SerialWriter(Promise.resolve(fakeStore), stop.signal);
    writer.enqueue(() => new Promise(() => undefined));
    stop.abort();
    const flushed = writer.flush();
    flushed.catch(() => undefined);
    await vi.advanceTimersByTimeAsync(STOP_FLUSH_GRACE_MS - 100);
    let settled = false;
    void flushed.then(
      () => (settled = true),
      () => (settled = true),
    );
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(200);
    await expect(flushed).rejects.toThrow(/did not finish saving within 2 s of the stop/);
  });

  it('does not wait for an open that never ends beyond STOP_OPEN_GRACE_MS + STOP_FLUSH_GRACE_MS', async () => {
    vi.useFakeTimers();
    const stop = new AbortController();
    const writer = new SerialWriter(new Promise<Store>(() => undefined), stop.signal);
    writer.enqueue(() => Promise.resolve());
    stop.abort();
    const flushed = writer.flush();
    flushed.catch(() => undefined);
    await vi.advanceTimersByTimeAsync(STOP_OPEN_GRACE_MS + STOP_FLUSH_GRACE_MS + 10);
    await expect(flushed).rejects.toThrow(/did not finish saving/);
  });
});

describe('SerialWriter.hold (a new session is stored once the model answered)', () => {
  it('keeps writes back until release, then lands them in order before later ones', async () => {
    const writer = new SerialWriter(Promise.resolve(fakeStore));
    const written: string[] = [];
    writer.hold();
    writer.enqueue(() => Promise.resolve(void written.push('create session')));
    writer.enqueue(() => Promise.resolve(void written.push('user message')));
    await Promise.resolve();
    expect(written).toEqual([]);
    writer.release();
    writer.enqueue(() => Promise.resolve(void written.push('assistant message')));
    await writer.flush();
    expect(written).toEqual(['create session', 'user message', 'assistant message']);
  });

  it('drops the held writes on discard; later writes still land', async () => {
    const writer = new SerialWriter(Promise.resolve(fakeStore));
    const written: string[] = [];
    writer.hold();
    writer.enqueue(() => Promise.resolve(void written.push('create session')));
    writer.discard();
    writer.enqueue(() => Promise.resolve(void written.push('after')));
    await writer.flush();
    expect(written).toEqual(['after']);
  });

  it('flush lands held writes (a stop keeps the prompt)', async () => {
    const writer = new SerialWriter(Promise.resolve(fakeStore));
    const written: string[] = [];
    writer.hold();
    writer.enqueue(() => Promise.resolve(void written.push('prompt')));
    await writer.flush();
    expect(written).toEqual(['prompt']);
  });
});
