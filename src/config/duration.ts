/**
 * Durations as users write them in config, task files and `--deadline`: one or more
 * `<number><unit>` parts, e.g. `90s`, `30m`, `8h`, `1h30m`, `1.5h`, `2d`, `500ms`.
 * A bare number is refused: `--deadline 8` could mean seconds or hours.
 */

import { InvalidInputError, printable } from '../errors.js';

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const WHOLE = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/;
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;

/** What a valid duration looks like; part of every error message about one. */
export const DURATION_HINT = 'a duration such as 90s, 30m, 8h or 1h30m';

/**
 * Longest duration accepted. Nothing navi times (a run's deadline, an iteration, a keep-alive)
 * is meant to last longer, and the cap keeps every value a safe integer that a Date can hold.
 */
export const MAX_DURATION_MS = 365 * 86_400_000;

/** Milliseconds of a well-formed `text`, unbounded (may be huge or Infinity), or undefined when malformed. */
function rawMilliseconds(text: string): number | undefined {
  const s = text.trim();
  if (!WHOLE.test(s)) return undefined;
  let ms = 0;
  for (const [, amount, unit] of s.matchAll(PART)) {
    ms += Number(amount) * (UNIT_MS[unit ?? ''] ?? Number.NaN);
  }
  // Whole milliseconds: timers and database columns want integers.
  return Math.round(ms);
}

/**
 * What is wrong with `text` as a duration, as the end of a sentence (`must be …`), or undefined
 * when it is a positive duration of at most MAX_DURATION_MS.
 */
export function durationProblem(text: string): string | undefined {
  const ms = rawMilliseconds(text);
  if (ms === undefined || !(ms > 0)) return `must be ${DURATION_HINT}`;
  if (!Number.isSafeInteger(ms) || ms > MAX_DURATION_MS) return 'must be at most 365d';
  return undefined;
}

/** Milliseconds for `text`, or `undefined` when it is not a positive duration of at most 365 days. */
export function tryParseDuration(text: string): number | undefined {
  return durationProblem(text) === undefined ? rawMilliseconds(text) : undefined;
}

/**
 * Milliseconds for `text`. Throws InvalidInputError (`invalid_duration`, exit 2) naming the
 * value when it is not a positive duration of at most 365 days; `what` names where it came
 * from (`--deadline`).
 */
export function parseDuration(text: string, what = 'duration'): number {
  const ms = tryParseDuration(text);
  if (ms === undefined) {
    const problem = durationProblem(text) ?? `must be ${DURATION_HINT}`;
    throw new InvalidInputError('invalid_duration', `${what}: ${problem} (got ${printable(JSON.stringify(text))})`);
  }
  return ms;
}
