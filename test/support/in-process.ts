/**
 * Runs navi's `main(args, host, commands)` in the test's own process (issue 36): argument
 * parsing, the shorthand, usage errors and help are read back from in-memory streams, without
 * spawning the built CLI — milliseconds instead of a Node start-up each. The process is the
 * point only for a few cases (exit codes through the real bin, a pty, signals, the bundle); those
 * stay spawned (test/support/cli.ts).
 *
 * `parseInProcess` stops at the command yargs (or `navi run`'s fast path) chose: its stand-in
 * commands record it and run nothing, so `ran` says which command would have run with which
 * flags, and a test of parsing can never open a database or call a model (nor reach one through
 * what it imports: it stays in the unit tier). `runInProcess` runs the command too, with the
 * implementations the bin runs.
 */
import { Readable, Writable } from 'node:stream';
import { main } from '../../src/cli/app.js';
import { NAVI_COMMANDS } from '../../src/cli/command-modules/handlers.js';
import type { CommandName, Commands, NaviArgv } from '../../src/cli/command-modules/invocation.js';
import type { CliHost } from '../../src/cli/host.js';

export interface InProcessOptions {
  /** The whole environment navi sees (nothing of the test process's leaks in). */
  env: Record<string, string>;
  /** navi's working directory (`--cwd` defaults to it). */
  cwd: string;
  /** Text on stdin; absent: an empty stdin. */
  stdin?: string;
  /** stdout's terminal width (help wraps to it); absent: not a terminal. */
  columns?: number;
}

export interface InProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ParseResult extends InProcessResult {
  /** The command that would have run and its flags; undefined when none would (help, a usage error). */
  ran?: { command: CommandName; argv: NaviArgv };
}

/** A stream that keeps what is written to it, as text. */
function collector(columns?: number): { stream: NodeJS.WriteStream; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk);
      callback();
    },
  });
  // Not a terminal (`isTTY: false`): navi never calls the terminal-only methods a WriteStream adds.
  const writer = Object.assign(stream, { isTTY: false, columns }) as unknown as NodeJS.WriteStream;
  return { stream: writer, text: () => Buffer.concat(chunks).toString('utf8') };
}

/** `navi ...args` in this process with `commands`: its exit code and what it wrote. */
async function invoke(args: readonly string[], opts: InProcessOptions, commands: Commands): Promise<InProcessResult> {
  const stdout = collector(opts.columns);
  const stderr = collector();
  const stdin = Object.assign(Readable.from(opts.stdin === undefined ? [] : [opts.stdin]), { isTTY: false });
  const host: CliHost = {
    env: { ...opts.env },
    cwd: opts.cwd,
    stdin,
    stdout: stdout.stream,
    stderr: stderr.stream,
    // The test's process is not navi's: nothing may assume it ends with this invocation.
    ownsProcess: false,
    // Text given is a pipe that closes after it; none is an empty stdin, as /dev/null is for the bin.
    stdinKind: () => (opts.stdin === undefined ? 'none' : 'pipe'),
  };
  const code = await main([...args], host, commands);
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** One invocation of navi with `args` in this process, its command run as the bin runs it. */
export function runInProcess(args: readonly string[], opts: InProcessOptions): Promise<InProcessResult> {
  return invoke(args, opts, NAVI_COMMANDS);
}

/** `args` parsed in this process as the bin parses them; the command chosen is recorded, not run (exit 0). */
export async function parseInProcess(args: readonly string[], opts: InProcessOptions): Promise<ParseResult> {
  let ran: ParseResult['ran'];
  const record: Commands = {
    runFast: (argv) => {
      ran = { command: 'run', argv };
      return Promise.resolve(0);
    },
    run: (command, argv) => {
      ran = { command, argv };
      return Promise.resolve(0);
    },
  };
  const result = await invoke(args, opts, record);
  return { ...result, ...(ran !== undefined ? { ran } : {}) };
}
