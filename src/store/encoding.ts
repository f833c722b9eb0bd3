/**
 * How values cross into PostgreSQL columns, shared by every repository: text without NUL, and
 * JSON kept as text (not jsonb) wherever what is read back must be byte-identical to what was
 * written (jsonb reorders object keys and drops duplicate ones).
 */
import { StorageError } from '../errors.js';

/** PostgreSQL text cannot hold NUL; a tool that read a binary file must not crash the run. */
export function pgText(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

/** `pgText` for optional values: absent → SQL NULL. */
export function nullableText(value: string | null | undefined): string | null {
  return value === undefined || value === null ? null : pgText(value);
}

/**
 * JSON text of `value` for a text column. `JSON.stringify` escapes NUL and lone surrogates, so
 * the result always fits a text column and `JSON.parse` gives back the same keys in the same
 * order. `undefined` is stored as `null` (what JSON would make of it inside an object).
 * `field` names the value in the error a BigInt or a cycle causes.
 */
export function encodeJson(value: unknown, field: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new StorageError('store_value_not_json', `Cannot store ${field}: it is not JSON-serialisable (${errorText(err)}).`, {
      cause: err,
    });
  }
  return text ?? 'null';
}

/** `encodeJson` for nullable JSON columns: `null`/`undefined` → SQL NULL. */
export function encodeNullableJson(value: unknown, field: string): string | null {
  return value === null || value === undefined ? null : encodeJson(value, field);
}

/** Parses a JSON text column (written by `encodeJson`). */
export function decodeJson(text: string): unknown {
  return JSON.parse(text) as unknown;
}

/** Parses a nullable JSON text column; SQL NULL → `null`. */
export function decodeNullableJson(text: string | null): unknown {
  return text === null ? null : decodeJson(text);
}

/** Token counts and durations are integers in the database; models report whole numbers anyway. */
export function wholeNumber(value: number): number {
  return Math.trunc(value);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
