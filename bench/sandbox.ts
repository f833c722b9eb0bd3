/**
 * The sandbox figure of `npm run bench` (`--only sandbox`; issue 22): what `--sandbox
 * workspace-write` adds to one shell-tool command. The same `runCommand` the shell tool calls
 * runs a trivial `true` with and without the sandbox, interleaved (the machine is shared), and
 * the row is the median difference (info: there is no target; the README quotes it).
 */
import { performance } from 'node:perf_hooks';
import { prepareSandbox } from '../src/sandbox/prepare.js';
import { runCommand } from '../src/tools/run-command.js';

/** What bench/run.ts lends this file. */
export interface SandboxBenchContext {
  /** Commands of each kind (default 50). */
  runs: number;
  work: string;
  row: (figure: string, target: string, measured: string, verdict: 'pass' | 'FAIL' | 'info' | 'skip' | 'error', data?: Record<string, unknown>) => void;
  median: (xs: number[]) => number;
}

async function timedTrue(cwd: string, sandbox?: Awaited<ReturnType<typeof prepareSandbox>>): Promise<number> {
  const started = performance.now();
  const result = await runCommand({
    command: 'true',
    cwd,
    timeoutMs: 30_000,
    maxOutputBytes: 1024,
    signal: new AbortController().signal,
    ...(sandbox ? { sandbox } : {}),
  });
  if (result.exitCode !== 0) throw new Error(`true exited ${String(result.exitCode)}: ${result.output}`);
  return performance.now() - started;
}

export async function figureSandbox(ctx: SandboxBenchContext): Promise<void> {
  const figure = (what: string): string => `shell command overhead of --sandbox workspace-write${what} (\`true\`)`;
  let sandbox;
  let networked;
  try {
    sandbox = await prepareSandbox({ mode: 'workspace-write', network: false }, { cwd: ctx.work, env: process.env });
    networked = await prepareSandbox({ mode: 'workspace-write', network: true }, { cwd: ctx.work, env: process.env });
  } catch (err) {
    ctx.row(figure(''), 'info', `skipped: ${(err as Error).message}`, 'skip');
    return;
  }
  const plain: number[] = [];
  const boxed: number[] = [];
  const boxedNet: number[] = [];
  // Warm every path once.
  for (const s of [undefined, sandbox, networked]) await timedTrue(ctx.work, s);
  for (let i = 0; i < ctx.runs; i++) {
    plain.push(await timedTrue(ctx.work));
    boxed.push(await timedTrue(ctx.work, sandbox));
    boxedNet.push(await timedTrue(ctx.work, networked));
  }
  const base = ctx.median(plain);
  const report = (what: string, xs: number[]): void => {
    const extra = ctx.median(xs) - base;
    ctx.row(figure(what), 'info', `+${extra.toFixed(1)} ms (${ctx.median(xs).toFixed(1)} vs ${base.toFixed(1)} ms, median of ${ctx.runs} each, interleaved)`, 'info', {
      plain,
      boxed: xs,
    });
  };
  report('', boxed);
  report(', network: true', boxedNet);
}
