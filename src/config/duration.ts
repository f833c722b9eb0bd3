/**
 * Durations as users write them in config, task files and `--deadline`: one or more
 * `<number><unit>` parts, e.g. `90s`, `30m`, `8h`, `1h30m`, `1.5h`, `2d`, `500ms`.
 * A bare number is refused: `--deadline 8` could mean seconds or hours.
 */

import { InvalidInputError } from '../errors.js';

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

/** Milliseconds for `text`, or `undefined` when it is not a positive duration. */
export function tryParseDuration(text: string): number | undefined {
  const s = text.trim();
  if (!WHOLE.test(s)) return undefined;
  let ms = 0;
  for (const [, amount, unit] of s.matchAll(PART)) {
    ms += Number(amount) * (UNIT_MS[unit ?? ''] ?? Number.NaN);
  }
  // Whole milliseconds: timers and database columns want integers.
  const rounded = Math.round(ms);
  return Number.isFinite(rounded) && rounded > 0 ? rounded : undefined;
}

/**
 * Milliseconds for `text`. Throws InvalidInputError (`invalid_duration`, exit 2) naming the
 * value when it is not a positive duration; `what` names where it came from (`--deadline`).
 */
export function parseDuration(text: string, what = 'duration'): number {
  const ms = tryParseDuration(text);
  if (ms === undefined) {
    throw new InvalidInputError('invalid_duration', `${what}: must be ${DURATION_HINT} (got ${JSON.stringify(text)})`);
  }
  return ms;
}
