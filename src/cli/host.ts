/**
 * What one invocation of the CLI reads from and writes to: its environment, working directory
 * and three standard streams. The bin passes the real process (`processHost()`); a test passes
 * its own, so argument parsing, usage errors, help and whole commands run in the test's process
 * and are read back without spawning one (issue 36). Code under src/cli takes these from the
 * host it is given instead of reaching for `process`, except where the process itself is the
 * point: signals, `process.exit`, the exit code of a closed pipe.
 */

/** A stream navi writes to: stdout or stderr (a terminal, a pipe, a file, or a test's buffer). */
export interface HostWriter {
  write(chunk: string | Uint8Array, callback?: (err?: Error | null) => void): boolean;
  isTTY?: boolean;
  /** A terminal's width; undefined or 0 when it has none (a pipe, `script` without a size). */
  columns?: number;
  on(event: 'error', listener: (err: NodeJS.ErrnoException) => void): unknown;
}

/** stdin: read as an async iterable of chunks; `isTTY` when a person types into it. */
export interface HostReader extends AsyncIterable<Buffer | string> {
  isTTY?: boolean;
}

export interface CliHost {
  /** The environment this invocation reads (`process.env` for the bin; the test's own object in a test). */
  env: Record<string, string | undefined>;
  /** The directory relative paths start from when `--cwd` is not given. */
  cwd: string;
  stdin: NodeJS.ReadableStream & HostReader;
  stdout: NodeJS.WritableStream & HostWriter;
  stderr: NodeJS.WritableStream & HostWriter;
}

/** The real process: what `navi` on a terminal, in a pipe or under a supervisor gets. */
export function processHost(): CliHost {
  return { env: process.env, cwd: process.cwd(), stdin: process.stdin, stdout: process.stdout, stderr: process.stderr };
}
