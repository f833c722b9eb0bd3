/**
 * How the CLI ends: the exit code of a closed pipe, and an exit that hands stdout's last bytes
 * to the OS first. Shared by the run entry (entry.ts) and the full CLI (app.ts).
 */

/**
 * The exit code of a writer whose reader went away: 128 + SIGPIPE (13), what the shell reports for
 * `yes | head -1` (Node ignores SIGPIPE, so navi says it with an exit code). Not 0: the output
 * was cut, and `set -o pipefail` scripts must see it.
 */
export const EXIT_BROKEN_PIPE = 141;

/**
 * A reader that went away (`navi -o stream-json … | head -1`): exit at once, as SIGPIPE would,
 * without a message (the reader chose to stop) and without a stack trace.
 */
export function exitQuietlyOnBrokenPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(EXIT_BROKEN_PIPE);
    throw err;
  });
}

/** Hands stdout's last bytes to the OS, then exits with `code`. */
export async function finish(code: number): Promise<never> {
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  process.exit(code);
}
