/**
 * Turning zod issues into the one line a user reads: the dotted key, what is allowed, and what
 * was given — `loop_mode.max_iterations: must be an integer between 1 and 20 (got 50)`.
 */

import type { z } from 'zod';
import { printable } from '../errors.js';

/** One problem in one input: the dotted key (empty for the whole input) and the sentence about it. */
export interface Problem {
  path: string;
  text: string;
}

type Issue = z.core.$ZodIssue;
type AnySchema = z.core.$ZodType;

/** Issues reported per input beyond which the rest are counted, not listed: one line stays readable. */
const MAX_LISTED = 3;

/** Values longer than this are cut in messages; a pasted prompt is not worth echoing whole. */
const MAX_VALUE_CHARS = 60;

/** The dotted key; a key holding a newline or an ESC is escaped so the message stays one harmless line. */
function dotted(path: readonly PropertyKey[]): string {
  return printable(path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p))).join('.').replace(/\.\[/g, '['));
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let cur = input;
  for (const key of path) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}

/** JSON text of `value`, or undefined when it cannot be written (10 000 levels of nesting overflow the stack). */
function jsonOf(value: unknown): string | undefined {
  try {
    // JSON.stringify gives undefined for functions and symbols, which JSON input never holds.
    const json: string | undefined = JSON.stringify(value);
    return json;
  } catch {
    return undefined;
  }
}

function show(value: unknown): string {
  let s: string;
  if (value === undefined) s = 'nothing';
  // JSON.stringify writes Infinity (`1e309` in a file) and NaN as null.
  else if (typeof value === 'number' && !Number.isFinite(value)) s = String(value);
  else s = jsonOf(value) ?? (Array.isArray(value) ? '[…]' : typeof value === 'object' && value !== null ? '{…}' : typeof value);
  // Cut before escaping (a 1 MB value is not worth escaping whole); JSON.stringify leaves DEL and C1 raw.
  return printable(s.length > MAX_VALUE_CHARS ? `${s.slice(0, MAX_VALUE_CHARS - 1)}…` : s);
}

/** The object schema at `path` inside `schema` (through defaults and optionals), if any. */
function objectKeysAt(schema: AnySchema, path: readonly PropertyKey[]): string[] | undefined {
  let cur: AnySchema | undefined = schema;
  const next = (s: AnySchema): AnySchema | undefined => {
    const def = s._zod.def as { type: string; innerType?: AnySchema; in?: AnySchema };
    if (def.innerType) return def.innerType;
    if (def.type === 'pipe') return def.in;
    return undefined;
  };
  const unwrap = (s: AnySchema | undefined): AnySchema | undefined => {
    let x = s;
    for (let guard = 0; x && guard < 10; guard++) {
      if (x._zod.def.type === 'object') return x;
      x = next(x);
    }
    return x;
  };
  for (const key of path) {
    cur = unwrap(cur);
    if (!cur || cur._zod.def.type !== 'object') return undefined;
    cur = (cur._zod.def as unknown as { shape: Record<string, AnySchema> }).shape[String(key)];
  }
  cur = unwrap(cur);
  if (!cur || cur._zod.def.type !== 'object') return undefined;
  return Object.keys((cur._zod.def as unknown as { shape: Record<string, AnySchema> }).shape);
}

/** Problems for `issues` raised by `schema` on `input`. */
export function problemsFrom(issues: readonly Issue[], input: unknown, schema: AnySchema): Problem[] {
  const out: Problem[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      const allowed = objectKeysAt(schema, issue.path);
      for (const key of issue.keys) {
        out.push({
          path: dotted([...issue.path, key]),
          text: allowed ? `unknown key (allowed: ${allowed.join(', ')})` : 'unknown key',
        });
      }
      continue;
    }
    const given = valueAt(input, issue.path);
    if (issue.code === 'invalid_type' && issue.expected === 'object') {
      const keys = objectKeysAt(schema, issue.path);
      out.push({
        path: dotted(issue.path),
        text: `must be an object${keys ? ` with keys ${keys.join(', ')}` : ''} (got ${show(given)})`,
      });
      continue;
    }
    // A value that may hold a secret (a notify URL) is not echoed: its message names it redacted.
    const hidden = issue.code === 'custom' && (issue.params as { hideValue?: unknown } | undefined)?.hideValue === true;
    out.push({ path: dotted(issue.path), text: hidden ? printable(issue.message) : `${printable(issue.message)} (got ${show(given)})` });
  }
  return out;
}

/**
 * One line for a list of problems, at most MAX_LISTED of them, then "and N more". `where` is
 * either a file name — `<file>: a.b: text; c: text` — or a function giving each key's prefix
 * (the environment variable or flag that set it).
 */
export function formatProblems(problems: readonly Problem[], where: string | ((path: string) => string)): string {
  const listed = problems.slice(0, MAX_LISTED);
  const more = problems.length - listed.length;
  const tail = more > 0 ? `; and ${more} more problem${more === 1 ? '' : 's'}` : '';
  if (typeof where === 'string') {
    const items = listed.map((p) => (p.path === '' ? p.text : `${p.path}: ${p.text}`));
    return `${where}: ${items.join('; ')}${tail}`;
  }
  return listed.map((p) => `${where(p.path)}: ${p.text}`).join('; ') + tail;
}
