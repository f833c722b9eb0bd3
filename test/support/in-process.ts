/**
 * Runs navi's `main(args, host)` in the test's own process (issue 36): argument parsing, the
 * shorthand, usage errors and help are read back from in-memory streams, without spawning the
 * built CLI — milliseconds instead of a Node start-up each. The process is the point only for a
 * few cases (exit codes through the real bin, the pty, the bundle); those stay in spawned tests
 * (test/support/cli.ts).
 *
 * `parseOnly` stops at the command yargs (or `navi run`'s fast path) chose: nothing is loaded or
 * run, and `ran` says which command would have run with which flags. Tests of parsing use it, so
 * a case that turns out to reach a command can never open a database or call a model.
 */
import { Readable, Writable } from 'node:stream';
import { main } from '../../src/cli/app.js';
import type { NaviArgv, ParsedCommand } from '../../src/cli/command-modules/invocation.js';
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
  /** Parse only: record the command instead of running it (exit code 0 when one was chosen). */
  parseOnly?: boolean;
}

export interface InProcessResult {
  code: number;
  stdout: string;
  stderr: string;
  /** With `parseOnly`: the command that would have run, and its flags; undefined when none would. */
  ran?: { command: string; argv: NaviArgv };
}

/** A stream that keeps what is written to it, as text. */
function collector(columns?: number): { stream: CliHost['stdout']; text: () => string } {
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

/** One invocation of navi with `args` in this process: its exit code and what it wrote. */
export async function runInProcess(args: readonly string[], opts: InProcessOptions): Promise<InProcessResult> {
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
  let ran: ParsedCommand | undefined;
  const dryRun = (parsed: ParsedCommand): number => {
    ran = parsed;
    return 0;
  };
  const code = await main([...args], host, opts.parseOnly === true ? { dryRun } : {});
  return { code, stdout: stdout.text(), stderr: stderr.text(), ...(ran !== undefined ? { ran } : {}) };
}
