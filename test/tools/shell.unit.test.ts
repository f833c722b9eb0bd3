import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinTools } from '../../src/tools/builtin/index.js';
import { shellTimeoutS } from '../../src/tools/builtin/shell.js';
import { createRedactor } from '../../src/tools/redact.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { DEFAULT_SHELL_DENY } from '../../src/tools/shell-policy.js';
import type { ToolContext } from '../../src/tools/types.js';
import { makeContext, processAlive, removeDir, tempDir, waitFor } from './helpers.js';

const registry = new ToolRegistry(builtinTools(), { maxOutputBytes: 256 * 1024 });
const allowed = new Set(['shell']);
let cwd: string;

beforeAll(async () => {
  cwd = await tempDir('navi-shell-');
});
afterAll(async () => {
  await removeDir(cwd);
});

function shell(args: unknown, overrides: Partial<ToolContext> = {}) {
  const ctx = makeContext(cwd, overrides);
  return { ctx, result: registry.execute('shell', args, ctx, allowed) };
}

function pidsIn(output: string): number[] {
  return [...output.matchAll(/^PID (\d+)$/gm)].map((m) => Number(m[1]));
}

describe('shellTimeoutS: the model may lower tools.shell.timeout_s, never raise it', () => {
  const cases: Array<[number | undefined, number, number]> = [
    [undefined, 120, 120],
    [10, 120, 10],
    [0.5, 120, 0.5],
    [999_999, 120, 120],
    [121, 120, 120],
    [120, 120, 120],
    [0, 120, 120],
    [-5, 120, 120],
    [Number.NaN, 120, 120],
    [Number.POSITIVE_INFINITY, 1, 1],
  ];
  it.each(cases)('requested %s, configured %s → %s', (requested, configured, want) => {
    expect(shellTimeoutS(requested, configured)).toBe(want);
  });
});

describe('shell', () => {
  it('a timeout_s above tools.shell.timeout_s is capped, and the result says so', async () => {
    // Uncapped, the command would run for ten minutes (past the test's hang guard).
    const ctx = { shell: { allow: [], deny: [], timeoutS: 1, maxOutputBytes: 65536 } };
    const { ok, output } = await shell({ command: 'sleep 600', timeout_s: 999_999 }, ctx).result;
    expect(ok).toBe(false);
    expect(output).toBe('[timed out after 1 s; timeout_s is capped at tools.shell.timeout_s]');
  });

  it('runs in the working directory and reports the exit code', async () => {
    expect(await shell({ command: 'pwd' }).result).toEqual({ ok: true, output: `${cwd}\n[exit code 0]` });
    expect(await shell({ command: 'echo oops >&2; exit 3' }).result).toEqual({ ok: false, output: 'oops\n[exit code 3]' });
  });

  it('interleaves stdout and stderr and closes stdin', async () => {
    const { result } = shell({ command: 'echo out; sleep 0.1; echo err >&2; sleep 0.1; echo out2; cat; echo "stdin:$?"' });
    expect((await result).output).toBe('out\nerr\nout2\nstdin:0\n[exit code 0]');
  });

  it('kills the whole process group on timeout, grandchildren included', async () => {
    // The sleeps outlast the test's hang guard: the result can only come from the timeout.
    const { result } = shell({ command: 'sleep 600 & echo "PID $!"; sh -c \'sleep 600 & echo "PID $!"; wait\' & wait', timeout_s: 1 });
    const { ok, output } = await result;
    expect(ok).toBe(false);
    expect(output.endsWith('[timed out after 1 s]')).toBe(true);
    const pids = pidsIn(output);
    expect(pids).toHaveLength(2);
    for (const pid of pids) expect(await waitFor(() => !processAlive(pid), 20_000)).toBe(true);
  });

  it('reaps background children left behind by a shell that exits at once', async () => {
    // The second child holds the output pipe open for ten minutes: a tool that waited for it would
    // hit the test's hang guard.
    const { result } = shell({ command: 'sleep 600 >/dev/null 2>&1 & echo "PID $!"; sleep 600 & echo "PID $!"' });
    const { ok, output } = await result;
    expect(ok).toBe(true);
    const pids = pidsIn(output);
    expect(pids).toHaveLength(2);
    for (const pid of pids) expect(await waitFor(() => !processAlive(pid), 20_000)).toBe(true);
  });

  it('escalates to SIGKILL when the group ignores SIGTERM', async () => {
    // The loop never ends by itself: only SIGKILL returns the result.
    const { result } = shell({ command: "trap '' TERM; echo \"PID $$\"; while :; do sleep 0.1; done", timeout_s: 0.5 });
    const { output } = await result;
    expect(output).toContain('[timed out after 0.5 s]');
    for (const pid of pidsIn(output)) expect(await waitFor(() => !processAlive(pid), 20_000)).toBe(true);
  });

  // The bounded buffer shows in what is kept and counted; the peak memory it allows is a bench figure.
  it('caps 100 MB of output: the head and the tail kept, the rest counted', async () => {
    const { result } = shell({ command: "head -c 100000000 /dev/zero | tr '\\0' a" });
    const { ok, output } = await result;
    expect(ok).toBe(true);
    expect(output).toMatch(/^a+\n\[… \d+ bytes omitted …\]\na+\n\[exit code 0\]$/);
    expect(Buffer.byteLength(output)).toBeLessThan(64 * 1024 + 200);
    const omitted = Number(/\[… (\d+) bytes omitted …\]/.exec(output)?.[1]);
    expect(omitted).toBe(100_000_000 - 64 * 1024);
  });

  it('fits the registry cap itself, so the one marker counts the real loss', async () => {
    const ctx = makeContext(cwd);
    const result = await new ToolRegistry(builtinTools()).execute('shell', { command: 'seq 1 2000000' }, ctx, allowed);
    expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(32 * 1024);
    expect(result.output.match(/bytes omitted/g)).toHaveLength(1);
    const omitted = Number(/\[… (\d+) bytes omitted …\]/.exec(result.output)?.[1]);
    expect(omitted).toBe(14_888_896 - (32 * 1024 - 128));
    expect(result.output).toMatch(/^1\n2\n3\n/);
    expect(result.output).toMatch(/2000000\n\[exit code 0\]$/);
  });

  it('kills the group and propagates an abort', async () => {
    const controller = new AbortController();
    const pidFile = path.join(cwd, 'abort.pid');
    const { result } = shell({ command: `sleep 600 & echo $! > ${pidFile}.tmp; mv ${pidFile}.tmp ${pidFile}; wait` }, { signal: controller.signal });
    // Aborted once the command runs (its child's pid is on disk); only the abort ends it.
    expect(await waitFor(() => existsSync(pidFile), 20_000)).toBe(true);
    controller.abort();
    await expect(result).rejects.toMatchObject({ name: 'AbortError' });
    const pid = Number((await readFile(pidFile, 'utf8')).trim());
    expect(pid).toBeGreaterThan(0);
    expect(await waitFor(() => !processAlive(pid), 20_000)).toBe(true);
  });

  it('denies a policy-matching command with a result and a warning event', async () => {
    const { ctx, result } = shell(
      { command: 'echo fine && sudo rm -rf /var' },
      { shell: { allow: [], deny: [...DEFAULT_SHELL_DENY], timeoutS: 5, maxOutputBytes: 1024 } },
    );
    const { ok, output } = await result;
    expect(ok).toBe(false);
    expect(output).toMatch(/^denied by tools\.shell policy: 'sudo rm -rf \/var' matches deny pattern 'sudo \*'/);
    expect(ctx.events).toEqual([
      { type: 'warning', code: 'shell_denied', message: "shell command denied: 'sudo rm -rf /var' matches deny pattern 'sudo *'" },
    ]);
  });

  it('redacts secret environment values from output', async () => {
    process.env.NAVI_TEST_API_KEY = 'sk-live-0123456789';
    try {
      const redact = createRedactor(process.env);
      const { result } = shell({ command: 'echo "key=$NAVI_TEST_API_KEY"' }, { redact });
      expect(await result).toEqual({ ok: true, output: 'key=[REDACTED:NAVI_TEST_API_KEY]\n[exit code 0]' });
    } finally {
      delete process.env.NAVI_TEST_API_KEY;
    }
  });

  it('reports a signal death', async () => {
    expect(await shell({ command: 'kill -SEGV $$' }).result).toEqual({ ok: false, output: '[killed by signal SIGSEGV]' });
  });
});
