/**
 * Leaf validators shared by the config and profile schemas. Each carries the sentence a user
 * reads when the value is wrong ("must be an integer between 1 and 20"); the loader appends
 * the file, the key and the value given.
 */

import { z } from 'zod';

/** Integer in [min, max]. */
export function intBetween(min: number, max: number) {
  const error = `must be an integer between ${min} and ${max}`;
  return z.int({ error }).min(min, { error }).max(max, { error });
}

/** Integer ≥ min (1 reads as "a positive integer"). */
export function intAtLeast(min: number) {
  const error = min === 1 ? 'must be a positive integer' : `must be an integer of at least ${min}`;
  return z.int({ error }).min(min, { error });
}

/** Finite number > 0; `unit` is named in the message ("seconds"). */
export function positiveNumber(unit?: string) {
  const error = unit ? `must be a positive number of ${unit}` : 'must be a positive number';
  return z.number({ error }).positive({ error });
}

/** Finite number in [min, max]. */
export function numberBetween(min: number, max: number) {
  const error = `must be a number between ${min} and ${max}`;
  return z.number({ error }).min(min, { error }).max(max, { error });
}

/** true or false (not "true", not 1). */
export function bool() {
  return z.boolean({ error: 'must be true or false' });
}

/** One of a fixed set of strings. */
export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: `must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}` });
}

/** Non-empty string. */
export function text() {
  const error = 'must be a non-empty string';
  return z.string({ error }).min(1, { error });
}

/** Array of non-empty strings. */
export function textList() {
  return z.array(text(), { error: 'must be an array of strings' });
}
