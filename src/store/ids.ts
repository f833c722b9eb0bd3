/**
 * Ids users see and type: memory ids (`forget m_k3x9a0q2`) and loop run ids
 * (`navi loop --resume run_mikq3x2a0_7hq2`).
 */
import { randomBytes } from 'node:crypto';

/** Random base36 characters: 8 of them give ~41 bits, ample per user, short enough to type. */
function randomBase36(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  // 252 = 7 × 36: discarding bytes ≥ 252 keeps every character equally likely.
  for (const byte of bytes) if (byte < 252) out += (byte % 36).toString(36);
  return out.length >= length ? out.slice(0, length) : out + randomBase36(length - out.length);
}

/** A new memory id: `m_` + 8 base36 characters. */
export function newMemoryId(): string {
  return `m_${randomBase36(8)}`;
}

/** Base36 digits of a millisecond timestamp: 9 cover every date up to the year 5188. */
const TIME_DIGITS = 9;
let lastMillis = 0;

/**
 * A new loop run id, `run_` + start time (base36 milliseconds) + `_` + 4 random characters.
 * Ids sort by creation time as text, strictly increasing within a process even when two runs
 * start in the same millisecond (the clock is then borrowed from ahead).
 */
export function newRunId(now: number = Date.now()): string {
  lastMillis = Math.max(now, lastMillis + 1);
  return `run_${lastMillis.toString(36).padStart(TIME_DIGITS, '0')}_${randomBase36(4)}`;
}
