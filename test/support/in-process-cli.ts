/**
 * Runs a navi command in the test's own process (issue 36): the same code as the bin, from the
 * source, against a host (src/cli/host.ts) whose environment, working directory and streams are
 * the test's. A scenario that only reads what navi printed, its exit code and what it stored
 * needs no process of its own — spawning one costs Node's start-up and, on PGlite, loading the
 * database's WebAssembly every time. What only a process shows — signals, stdin, a terminal,
 * the built bundle, a process that must not outlive its parent — stays with `runNavi`.
 */
import fs from 'node:fs';
import { PassThrough, Writable } from 'node:stream';
import type { CliHost } from '../../src/cli/host.js';
import { runFast } from '../../src/cli/run-entry.js';
import { parseRunFast } from '../../src/cli/fast-run.js';
import { expandShorthand } from '../../src/cli/shorthand.js';
import { censusTestFile, runNavi, type JsonObject, type NaviResult, type RunOptions } from './cli.js';

/** A stream that keeps what is written to it, as a pipe would show it (not a terminal). */
class Collector extends Writable {
  text = '';
  readonly isTTY = false;
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    this.text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    done();
  }
}

export interface InProcessOptions {
  cwd: string;
  env: Record<string, string>;
}

/** The args this runner takes: those the bin's fast path answers (`navi run …`, `navi "…"`). */
export function runsInProcess(args: readonly string[]): boolean {
  try {
    return parseRunFast(expandShorthand([...args])) !== null;
  } catch {
    return false;
  }
}

/** `navi ...args` in this process; the same result shape as `runNavi`. */
export async function runNaviInProcess(args: readonly string[], opts: InProcessOptions): Promise<NaviResult> {
  const started = Date.now();
  const stdout = new Collector();
  const stderr = new Collector();
  const stdin = new PassThrough();
  stdin.end();
  const host: CliHost = {
    env: { ...opts.env },
    cwd: opts.cwd,
    stdin,
    stdout: stdout as unknown as NodeJS.WriteStream,
    stderr: stderr as unknown as NodeJS.WriteStream,
    ownsProcess: false,
    stdinKind: () => 'none',
  };
  const argv = parseRunFast(expandShorthand([...args]));
  if (argv === null) throw new Error(`runNaviInProcess: ${args.join(' ')} is not a command the fast path takes; use runNavi`);
  const code = await runFast(argv, host);
  const lines = stdout.text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const events: JsonObject[] = [];
  const badLines: string[] = [];
  for (const line of lines) {
    const value = parseObject(line);
    if (value === undefined) badLines.push(line);
    else events.push(value);
  }
  const exitedAt = Date.now();
  return {
    code,
    signal: null,
    stdout: stdout.text,
    stderr: stderr.text,
    lines,
    events,
    badLines,
    durationMs: exitedAt - started,
    timedOut: false,
    signalsSentAt: [],
    exitedAt,
    pid: process.pid,
  };
}

function parseObject(line: string): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A scenario's run of navi: in this process where nothing needs a process of its own (no
 * stdin, no signal to send, a command the fast path takes), else the built CLI spawned.
 * `NAVI_TEST_IN_PROCESS=0` spawns every run, as before (README, Development).
 */
export function runNaviWhereItCan(args: readonly string[], opts: RunOptions): Promise<NaviResult> {
  const inProcess = process.env.NAVI_TEST_IN_PROCESS !== '0' && opts.stdin === undefined && opts.signalAfter === undefined && runsInProcess(args);
  if (!inProcess) return runNavi(args, opts);
  return runNaviInProcess(args, opts).then((result) => {
    countForCensus(args, opts.env);
    return result;
  });
}

/** bench/cli-census.js counts the processes; a run in this process is a line of its own there. */
function countForCensus(args: readonly string[], env: Record<string, string>): void {
  const log = process.env.NAVI_CENSUS_LOG;
  if (log === undefined || log === '') return;
  const store = env.DATABASE_URL !== undefined || args.includes('--db') ? 'postgres' : 'pglite';
  fs.appendFileSync(log, `${JSON.stringify({ args, inProcess: true, store, test: censusTestFile() })}\n`);
}
