/**
 * How a user tool module's failures read (user-tools.ts): one line, never a stack trace, with the
 * line of a syntax error, which Node's own `import()` error does not carry.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { isRecord } from '../util/guards.js';

/** `node --check` of one file, run only to locate a syntax error; it takes ~50 ms. */
const SYNTAX_CHECK_TIMEOUT_MS = 5_000;

/** Duck-typed: errors from a module's own realm (or a test runner's) fail `instanceof Error`. */
export function isErrorLike(value: unknown): value is Error {
  return isRecord(value) && typeof value.message === 'string' && typeof value.name === 'string';
}

/** First line of an error, with its class when that says something ("TypeError: …"). */
export function errorLine(err: unknown): string {
  if (!isErrorLike(err)) return String(err).split('\n')[0] ?? '';
  const message = err.message.split('\n')[0] ?? '';
  if (message === '') return err.name;
  return err.name === 'Error' ? message : `${err.name}: ${message}`;
}

/** `node --check` of `file` with `flags`; the line it blames, if it prints one. */
function checkedLine(file: string, flags: readonly string[]): Promise<number | undefined> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...flags, '--check', file], { timeout: SYNTAX_CHECK_TIMEOUT_MS }, (error, _stdout, stderr) => {
      // The location line reads `/path/to/file.js:LINE` (or a file: URL); warnings may precede it.
      const lines = error ? String(stderr).split('\n').map((line) => line.trim()) : [];
      const located = lines.find((line) => line.includes(path.basename(file)) && /:\d+$/.test(line));
      const match = located === undefined ? null : /:(\d+)$/.exec(located);
      resolve(match ? Number(match[1]) : undefined);
    });
  });
}

/**
 * Node's SyntaxError from `import()` carries no location; `node --check` prints `file:LINE`.
 * Node 20's check of a `.js` file outside a `"type": "module"` package passes silently when
 * the syntax is ESM (module detection), so that case is checked again as a module.
 */
async function syntaxErrorLine(file: string): Promise<number | undefined> {
  const line = await checkedLine(file, []);
  if (line !== undefined || path.extname(file) !== '.js') return line;
  return checkedLine(file, ['--experimental-default-type=module', '--no-warnings']);
}

/** Why an import failed, in one line: never a stack trace. */
export async function importProblem(err: unknown, file: string): Promise<string> {
  const line = isErrorLike(err) && err.name === 'SyntaxError' ? await syntaxErrorLine(file) : undefined;
  return `failed to load: ${errorLine(err)}${line === undefined ? '' : ` (line ${line})`}`;
}
