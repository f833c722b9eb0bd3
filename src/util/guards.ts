/**
 * Narrowing helpers for values whose shape is not known yet: parsed JSON and YAML, and the
 * errors a `catch` receives. Bottom layer: any folder may import it, and it imports nothing.
 */

/** A plain object: not null and not an array (parsed JSON or YAML before it is validated). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The `code` of a failed system call (`ENOENT`, `EEXIST`, `EPERM`…), or undefined. */
export function errnoCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string') return err.code;
  return undefined;
}

/** A value's type as JSON names it (`null`, `array`, `object`, `string`…), for messages about bad input. */
export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
