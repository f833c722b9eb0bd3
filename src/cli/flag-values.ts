/**
 * Numeric flags checked as typed: `--max-iterations abc` is told "got 'abc'", not "got NaN"
 * (yargs' number type turns every non-number into NaN before anyone can name it).
 */
import { InvalidInputError, printable } from '../errors.js';

/**
 * The integer in `raw` (a flag's value as typed, or what yargs made of it), at least `min`;
 * otherwise an invalid-input error naming the flag and the value.
 */
export function integerFlag(flag: string, raw: unknown, min = 1): number {
  const text = typeof raw === 'string' ? raw.trim() : typeof raw === 'number' ? String(raw) : '';
  const value = /^[+-]?\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min) {
    const got = typeof raw === 'string' ? `'${printable(raw)}'` : typeof raw === 'number' ? String(raw) : 'no value';
    const want = min === 1 ? 'a positive integer' : min === 0 ? 'a non-negative integer' : `an integer of at least ${min}`;
    throw new InvalidInputError('flag_invalid', `--${flag} must be ${want} (got ${got})`);
  }
  return value;
}

/** A yargs `coerce` for an integer flag (the option needs `type: 'string'` so the text arrives whole). */
export function integerCoerce(flag: string, min = 1): (raw: unknown) => number | undefined {
  return (raw) => (raw === undefined ? undefined : integerFlag(flag, Array.isArray(raw) ? raw[raw.length - 1] : raw, min));
}
