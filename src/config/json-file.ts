/**
 * Reading the JSON files users hand navi (config, profile config.json) with errors that point
 * at the spot: `<file>:<line>:<col>: invalid JSON: <reason>`. V8 reports a character offset for
 * most syntax errors but not for an unexpected token, so a small scanner finds that one.
 */

import { InvalidInputError } from '../errors.js';
import { MAX_CONFIG_FILE_BYTES, readUserFile, UserFileError } from './read-user-file.js';

/** 1-based line and column of a character offset (columns count UTF-16 units, as editors near enough do). */
export type LineColumn = { line: number; column: number };

/**
 * A function giving the line and column of offsets in `text`. Line starts are found once and
 * each lookup is a binary search, so locating every problem of a file with thousands of them
 * stays linear (rescanning from the start per problem made `navi tasks validate` quadratic).
 */
export function lineLocator(text: string): (offset: number) => LineColumn {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return (offset) => {
    const end = Math.max(0, Math.min(offset, text.length));
    // The last line start at or before `end`.
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] ?? 0) <= end) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: end - (starts[lo] ?? 0) + 1 };
  };
}

/** Line and column of one offset; for many offsets in the same text use lineLocator. */
export function lineColumnAt(text: string, offset: number): LineColumn {
  return lineLocator(text.slice(0, Math.max(0, offset)))(offset);
}

/** Thrown inside the scanner to unwind to the offset of the first error. */
class ScanStop extends Error {
  constructor(readonly at: number) {
    super('json syntax error');
  }
}

/**
 * Offset of the first JSON syntax error in `text`, or -1 when it is valid. Only runs after
 * JSON.parse failed, so it favours brevity over speed.
 */
export function findJsonErrorOffset(text: string): number {
  let i = 0;
  const stop = (at = i): never => {
    throw new ScanStop(at);
  };
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text.charAt(i))) i++;
  };
  const str = (): void => {
    i++; // opening quote
    for (;;) {
      if (i >= text.length) stop();
      const c = text.charAt(i);
      if (c === '"') {
        i++;
        return;
      }
      if (c === '\\') {
        const e = text.charAt(i + 1);
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) stop(i + 1);
          i += 6;
        } else if ('"\\/bfnrt'.includes(e) && e !== '') {
          i += 2;
        } else {
          stop(i + 1);
        }
        continue;
      }
      if (text.charCodeAt(i) < 0x20) stop();
      i++;
    }
  };
  const num = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  const value = (): void => {
    ws();
    const c = text.charAt(i);
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      i++;
      ws();
      if (text.charAt(i) === close) {
        i++;
        return;
      }
      for (;;) {
        if (c === '{') {
          ws();
          if (text.charAt(i) !== '"') stop();
          str();
          ws();
          if (text.charAt(i) !== ':') stop();
          i++;
        }
        value();
        ws();
        const sep = text.charAt(i);
        if (sep === ',') {
          i++;
          continue;
        }
        if (sep === close) {
          i++;
          return;
        }
        stop();
      }
    }
    if (c === '"') return str();
    num.lastIndex = i;
    if (num.test(text)) {
      i = num.lastIndex;
      return;
    }
    const literal = c === 't' ? 'true' : c === 'f' ? 'false' : c === 'n' ? 'null' : '';
    if (literal === '') stop();
    // Like V8, blame the first character that departs from the literal (`nope` → the `o`).
    for (const ch of literal) {
      if (text.charAt(i) !== ch) stop();
      i++;
    }
  };
  try {
    value();
    ws();
    if (i < text.length) stop();
    return -1;
  } catch (err) {
    if (err instanceof ScanStop) return err.at;
    // Pathological nesting overflows the stack; the caller falls back to V8's message alone.
    return -1;
  }
}

/** The reason part of V8's JSON.parse message, without offsets or the echoed source. */
function jsonReason(message: string): string {
  return (
    message
      // Node 20: `Unexpected token 'x', "{"a": x}" is not valid JSON`, and for a longer text
      // `Unexpected token 'x', ..."ef", "b": x}" is not valid JSON`: V8 quotes the source around
      // the error, which may hold a secret; only the token is kept.
      .replace(/^(Unexpected token '.+?'), (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, '$1')
      .replace(/ in JSON at position \d+.*$/s, '')
      .replace(/ at position \d+.*$/s, '')
      .trim()
      // The unexpected token may be a newline; the message must stay one line.
      .replace(/\p{Cc}/gu, (c) => JSON.stringify(c).slice(1, -1))
  );
}

/**
 * Parses JSON text, throwing InvalidInputError(`code`) as `<display>:<line>:<col>: invalid JSON:
 * <reason>`. A leading byte-order mark is ignored (editors on Windows add one).
 */
export function parseJsonText(text: string, display: string, code: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return JSON.parse(body) as unknown;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const fromV8 = /at position (\d+)/.exec(message);
    let offset = fromV8 ? Number(fromV8[1]) : findJsonErrorOffset(body);
    if (offset < 0) offset = body.length;
    const { line, column } = lineColumnAt(body, offset);
    const reason = body.trim() === '' ? 'the file is empty' : jsonReason(message);
    throw new InvalidInputError(code, `${display}:${line}:${column}: invalid JSON: ${reason}`);
  }
}

/**
 * Reads and parses a JSON file (a regular file of at most MAX_CONFIG_FILE_BYTES). Returns
 * undefined when it does not exist and `optional` is set; any other failure is
 * InvalidInputError(`code`) naming `display`.
 */
export function readJsonFile(path: string, display: string, code: string, optional = false): unknown {
  let text: string;
  try {
    text = readUserFile(path, { display, code, maxBytes: MAX_CONFIG_FILE_BYTES, kind: 'JSON files' });
  } catch (err) {
    if (optional && err instanceof UserFileError && err.fsCode === 'ENOENT') return undefined;
    throw err;
  }
  return parseJsonText(text, display, code);
}
