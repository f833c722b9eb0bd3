/**
 * Piped stdin beside a prompt argument (issue 11, bug 4): `git diff | navi run "review this"`.
 * The argument is the instruction and stdin the material, as in `codex exec` and `gemini -p`.
 *
 * A prompt argument means navi must not wait forever on a stdin nobody writes to: a parent
 * process (a CI runner, a script's `spawn`) may hand navi a pipe it never closes. So when the
 * instruction is already there, stdin gets a grace period to show its first byte (or its end);
 * a redirected file is read at once. Without an argument stdin IS the prompt and is waited for.
 */
import { fstatSync } from 'node:fs';

/**
 * How long a pipe may stay silent before navi runs on the argument alone: long enough for a
 * slow producer's first byte (`git diff` on a big tree), short enough not to look hung.
 */
export const STDIN_GRACE_MS = 5000;

/** What kind of input stdin is: nothing (a terminal, /dev/null), a file, or a pipe/socket. */
export function stdinKind(): 'none' | 'file' | 'pipe' {
  if (process.stdin.isTTY === true) return 'none';
  try {
    const info = fstatSync(0);
    if (info.isFile()) return 'file';
    return info.isFIFO() || info.isSocket() ? 'pipe' : 'none';
  } catch {
    return 'none';
  }
}

/** All of stdin, waiting as long as it takes. */
export async function readAllStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * All of stdin, or null when nothing (not even its end) came within `graceMs`: then stdin is
 * let go and the run goes on without it.
 */
export function readStdinWithGrace(graceMs: number): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    const chunks: Buffer[] = [];
    let started = false;
    const done = (value: string | null): void => {
      clearTimeout(timer);
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      stdin.off('error', onError);
      if (value === null) stdin.destroy();
      resolve(value);
    };
    const onData = (chunk: Buffer): void => {
      started = true;
      chunks.push(chunk);
    };
    const onEnd = (): void => done(Buffer.concat(chunks).toString('utf8'));
    const onError = (err: Error): void => {
      clearTimeout(timer);
      reject(err);
    };
    const timer = setTimeout(() => {
      if (!started) done(null);
    }, graceMs);
    stdin.on('data', onData);
    stdin.once('end', onEnd);
    stdin.once('error', onError);
  });
}

/** The grace period: `NAVI_STDIN_GRACE_MS` (tests shorten it), else STDIN_GRACE_MS. */
export function stdinGraceMs(env: Record<string, string | undefined>): number {
  const set = Number(env.NAVI_STDIN_GRACE_MS);
  return Number.isFinite(set) && set >= 0 ? set : STDIN_GRACE_MS;
}
