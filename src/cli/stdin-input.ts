/**
 * Piped stdin beside a prompt argument (issue 11, bug 4): `git diff | navi run "review this"`.
 * The argument is the instruction and stdin the material, as in `codex exec` and `gemini -p`.
 *
 * A prompt argument means navi must not wait forever on a stdin nobody writes to: a parent
 * process (a CI runner, a script's `spawn`) may hand navi a pipe it never closes. So when the
 * instruction is already there, stdin gets a grace period to show its first byte (or its end);
 * a redirected file is read at once. Without an argument stdin IS the prompt and is waited for.
 */
import { InvalidInputError } from '../errors.js';
import type { HostReader } from './host.js';

/**
 * How long a pipe may stay silent before navi runs on the argument alone: long enough for a
 * slow producer's first byte (`git diff` on a big tree), short enough not to look hung.
 */
export const STDIN_GRACE_MS = 5000;

/**
 * Whether input is binary rather than text: it holds a NUL byte, the test git and grep use
 * (no text encoding a prompt may be in puts NUL in text, and PostgreSQL text cannot store it).
 * Invalid UTF-8 without NUL (a Latin-1 file) is text: it decodes with U+FFFD where it is wrong.
 */
export function isBinary(bytes: Uint8Array): boolean {
  return bytes.includes(0);
}

/**
 * Input bytes as prompt text, or exit 2 before any model call when they are binary
 * (`head -c 3000 /bin/ls | navi run` once reached the model and then failed to be stored).
 * `source` names the input: "stdin", "--file notes.bin".
 */
export function promptText(bytes: Buffer, source: string): string {
  if (isBinary(bytes)) {
    throw new InvalidInputError(
      'input_binary',
      `${source} is binary (it contains NUL bytes): navi takes text; pass a text file, or name the file in the prompt and let the model inspect it with its tools`,
    );
  }
  return bytes.toString('utf8');
}

/** All of stdin, waiting as long as it takes (exit 2 when it is binary). */
export async function readAllStdin(stdin: HostReader): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return promptText(Buffer.concat(chunks), 'stdin');
}

/**
 * All of stdin, or null when nothing (not even its end) came within `graceMs`: then stdin is
 * let go and the run goes on without it. Binary stdin rejects (exit 2), as in `readAllStdin`.
 */
export function readStdinWithGrace(stdin: HostReader, graceMs: number): Promise<string | null> {
  return new Promise((resolve, reject) => {
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
    const onError = (err: Error): void => {
      clearTimeout(timer);
      reject(err);
    };
    const onEnd = (): void => {
      let text: string;
      try {
        text = promptText(Buffer.concat(chunks), 'stdin');
      } catch (err) {
        onError(err as Error);
        return;
      }
      done(text);
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
