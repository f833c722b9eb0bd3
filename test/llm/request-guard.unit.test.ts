/**
 * RequestGuard on its own: the silence timer, the liveness check of a lenient limit and its
 * generation guard (a late answer must not act on a newer timer), the overall limit, dispose.
 * Fake timers decide when timers fire; the checks are promises the test settles by hand.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RequestGuard, type LivenessCheck } from '../../src/llm/request-guard.js';

/** A liveness check whose answers the test gives, one pending promise per call. */
function scriptedCheck(): { check: LivenessCheck; calls: () => number; answer: (alive: boolean) => void; fail: () => void } {
  const pending: Array<{ resolve: (alive: boolean) => void; reject: (err: Error) => void }> = [];
  let calls = 0;
  const check: LivenessCheck = () =>
    new Promise<boolean>((resolve, reject) => {
      calls++;
      pending.push({ resolve, reject });
    });
  const next = (): { resolve: (alive: boolean) => void; reject: (err: Error) => void } => {
    const first = pending.shift();
    if (first === undefined) throw new Error('no liveness check is pending');
    return first;
  };
  return {
    check,
    calls: () => calls,
    answer: (alive) => next().resolve(alive),
    fail: () => next().reject(new Error('connect ECONNREFUSED')),
  };
}

/** Lets settled promises run their callbacks (setImmediate is not faked). */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('RequestGuard silence timer', () => {
  it('a strict limit stops the request with its cause when the silence passes', () => {
    const guard = new RequestGuard();
    guard.arm('chunk_timeout', 1);
    vi.advanceTimersByTime(999);
    expect(guard.controller.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(guard.stopCause).toBe('chunk_timeout');
    expect(guard.controller.signal.aborted).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a lenient limit asks the check and waits another interval while the server answers', async () => {
    const guard = new RequestGuard();
    const { check, calls, answer } = scriptedCheck();
    guard.arm('chunk_timeout', 1, check);

    vi.advanceTimersByTime(1000);
    expect(calls()).toBe(1);
    // No timer runs while the check is out; the request goes on.
    expect(vi.getTimerCount()).toBe(0);
    answer(true);
    await settle();
    expect(guard.stopCause).toBeUndefined();
    expect(vi.getTimerCount()).toBe(1);

    vi.advanceTimersByTime(1000);
    expect(calls()).toBe(2);
    answer(false);
    await settle();
    expect(guard.stopCause).toBe('unresponsive');
    expect(guard.controller.signal.aborted).toBe(true);
  });

  it('a check that rejects counts as no answer', async () => {
    const guard = new RequestGuard();
    const { check, fail } = scriptedCheck();
    guard.arm('first_chunk_timeout', 1, check);
    vi.advanceTimersByTime(1000);
    fail();
    await settle();
    expect(guard.stopCause).toBe('unresponsive');
  });
});

describe('RequestGuard generation guard (late liveness answers)', () => {
  it.each([
    ['answers dead', false],
    ['rejects', 'reject'],
  ] as const)('a check that %s after a chunk disarmed the timer does not stop the request', async (_, outcome) => {
    const guard = new RequestGuard();
    const { check, answer, fail } = scriptedCheck();
    guard.arm('chunk_timeout', 1, check);
    vi.advanceTimersByTime(1000);
    // A chunk arrives while the check is out.
    guard.disarm();
    if (outcome === 'reject') fail();
    else answer(outcome);
    await settle();
    expect(guard.stopCause).toBeUndefined();
    expect(guard.controller.signal.aborted).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a late "alive" after disarm does not re-arm a timer', async () => {
    const guard = new RequestGuard();
    const { check, answer } = scriptedCheck();
    guard.arm('chunk_timeout', 1, check);
    vi.advanceTimersByTime(1000);
    guard.disarm();
    answer(true);
    await settle();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(10_000);
    expect(guard.stopCause).toBeUndefined();
  });

  it('a late "dead" for an old timer does not stop the re-armed one, which still works', async () => {
    const guard = new RequestGuard();
    const { check, calls, answer, fail } = scriptedCheck();
    guard.arm('chunk_timeout', 1, check);
    vi.advanceTimersByTime(1000);
    // Chunk arrived and the next wait began: a new timer, a newer generation.
    guard.arm('chunk_timeout', 1, check);
    answer(false);
    await settle();
    expect(guard.stopCause).toBeUndefined();
    expect(vi.getTimerCount()).toBe(1);

    // The same for a check that rejects late.
    vi.advanceTimersByTime(1000);
    expect(calls()).toBe(2);
    guard.arm('chunk_timeout', 1, check);
    fail();
    await settle();
    expect(guard.stopCause).toBeUndefined();

    // The newest timer is still in charge.
    vi.advanceTimersByTime(1000);
    expect(calls()).toBe(3);
    answer(false);
    await settle();
    expect(guard.stopCause).toBe('unresponsive');
  });

  it('a check answering after another cause stopped the request leaves that cause', async () => {
    const guard = new RequestGuard();
    const { check, answer } = scriptedCheck();
    guard.limitTotal(1.5);
    guard.arm('chunk_timeout', 1, check);
    vi.advanceTimersByTime(1000);
    vi.advanceTimersByTime(500);
    expect(guard.stopCause).toBe('call_timeout');
    answer(true);
    await settle();
    expect(guard.stopCause).toBe('call_timeout');
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('RequestGuard dispose', () => {
  it('clears the silence timer, the overall limit and the caller hook; a pending check has no effect', async () => {
    const caller = new AbortController();
    const guard = new RequestGuard(caller.signal);
    const { check, answer } = scriptedCheck();
    guard.limitTotal(5);
    guard.arm('chunk_timeout', 1, check);
    expect(vi.getTimerCount()).toBe(2);
    vi.advanceTimersByTime(1000);
    expect(vi.getTimerCount()).toBe(1); // the overall limit; the check is out

    guard.dispose();
    expect(vi.getTimerCount()).toBe(0);
    expect(guard.controller.signal.aborted).toBe(true);

    answer(false);
    caller.abort();
    await settle();
    vi.advanceTimersByTime(60_000);
    expect(guard.stopCause).toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('leaves no timer that keeps a process alive (real timers, a child process)', async () => {
    vi.useRealTimers();
    const dir = await mkdtemp(path.join(tmpdir(), 'navi-guard-'));
    try {
      const script = path.join(dir, 'guard-exit.mts');
      const guardUrl = pathToFileURL(path.resolve('src/llm/request-guard.ts')).href;
      // Hour-long limits: if dispose left any of them, the child would not exit by itself.
      await writeFile(
        script,
        `import { RequestGuard } from ${JSON.stringify(guardUrl)};
const caller = new AbortController();
const guard = new RequestGuard(caller.signal);
guard.limitTotal(3600);
// The silence passes at once; while its check is out the request ends (dispose), then the
// check answers "dead" and the caller aborts: neither may stop the disposed request.
guard.arm('chunk_timeout', 0.01, () => new Promise<boolean>((resolve) => {
  setTimeout(() => { guard.dispose(); resolve(false); caller.abort(); }, 0);
}));
const idle = new RequestGuard(caller.signal);
idle.limitTotal(3600);
idle.arm('first_chunk_timeout', 3600, () => Promise.resolve(true));
idle.dispose();
process.on('exit', () => process.stdout.write(JSON.stringify({ cause: guard.stopCause ?? null, idle: idle.stopCause ?? null })));
`,
      );
      const tsx = path.resolve('node_modules/.bin/tsx');
      const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn(tsx, [script], { stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        // Hang guard only: a child kept alive by a timer is killed and the test fails.
        const hang = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`hang guard: the child did not exit (a timer kept it alive); stderr: ${stderr}`));
        }, 25_000);
        child.on('exit', (code) => {
          clearTimeout(hang);
          resolve({ code, stdout, stderr });
        });
      });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({ cause: null, idle: null });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
