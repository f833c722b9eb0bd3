/**
 * What one invocation of the CLI reads from and writes to: its environment, working directory
 * and three standard streams. The bin passes the real process (`processHost()`); a test passes
 * its own, so argument parsing, usage errors, help and whole commands run in the test's process
 * and are read back without spawning one (issue 36). Code under src/cli takes these from the
 * host it is given instead of reaching for `process`, except where the process itself is the
 * point: signals, `process.exit`, the exit code of a closed pipe.
 */
import { fstatSync } from 'node:fs';
import type { Readable } from 'node:stream';

/** stdin: a readable stream; `isTTY` when a person types into it. */
export type HostReader = Readable & { isTTY?: boolean };

export interface CliHost {
  /** The environment this invocation reads (`process.env` for the bin; the test's own object in a test). */
  env: Record<string, string | undefined>;
  /** The directory relative paths start from when `--cwd` is not given. */
  cwd: string;
  stdin: HostReader;
  /**
   * stdout and stderr: a terminal, a pipe, a file — or a test's collecting stream, which says
   * `isTTY: false` (the spinner and the terminal-only paths never see it).
   */
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  /**
   * True when this invocation is the whole process (the bin): it may start loading a database it
   * will probably open before it knows, and the process ends with it. False in a test's process.
   */
  ownsProcess: boolean;
  /** What stdin is: nothing (a terminal, /dev/null), a file (read at once), or a pipe (maybe never closed). */
  stdinKind(): StdinKind;
}

export type StdinKind = 'none' | 'file' | 'pipe';

/** The kind of the process's own stdin (fd 0). */
function processStdinKind(): StdinKind {
  if (process.stdin.isTTY === true) return 'none';
  try {
    const info = fstatSync(0);
    if (info.isFile()) return 'file';
    return info.isFIFO() || info.isSocket() ? 'pipe' : 'none';
  } catch {
    return 'none';
  }
}

/** The real process: what `navi` on a terminal, in a pipe or under a supervisor gets. */
export function processHost(): CliHost {
  return { env: process.env, cwd: process.cwd(), stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, ownsProcess: true, stdinKind: processStdinKind };
}
