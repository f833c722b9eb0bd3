/**
 * `llm.outage_retry`: how long a model call waits out a transient Ollama outage (503 "server
 * busy", a connection dropped mid-reply or refused while Ollama restarts, a runner that crashed
 * and reloads) before the run ends with exit 75. A duration, or "0" for none. Unset: a loop
 * waits `LOOP_OUTAGE_RETRY_MS` (an overnight loop should survive Ollama's auto-update restart),
 * a one-shot run none (exit 75 at once: its caller decides whether to retry).
 */
import { tryParseDuration } from './duration.js';

/** Unset in loop mode: long enough for Ollama to restart and reload a large model. */
export const LOOP_OUTAGE_RETRY_MS = 5 * 60_000;

/** Why `value` is not an outage_retry (the end of a `must be …` sentence), or undefined. */
export function outageRetryProblem(value: string | number): string | undefined {
  if (value === 0 || value === '0') return undefined;
  if (typeof value === 'string' && tryParseDuration(value) !== undefined) return undefined;
  return 'must be a duration such as 90s, 5m or 1h, or 0 for none';
}

/** Milliseconds to wait out an outage: the setting when set, else by mode. */
export function outageRetryMs(value: string | number | undefined, loop: boolean): number {
  if (value === undefined) return loop ? LOOP_OUTAGE_RETRY_MS : 0;
  if (value === 0 || value === '0') return 0;
  return typeof value === 'string' ? (tryParseDuration(value) ?? 0) : 0;
}
