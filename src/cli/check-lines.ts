/**
 * The task's checks of one stored iteration, for `runs show` in text mode: each check with its
 * outcome, and for a failed one the end of its output — why it failed, which the JSON output
 * carries in `evidence.checks[].output_tail` and text mode must not leave out.
 */
import { isRecord } from '../util/guards.js';

/** Lines of a failed check's output shown in text mode (the JSON has the whole stored tail). */
const FAILED_OUTPUT_LINES = 15;

/** `evidence.checks` of a stored iteration as lines (none when the task has no checks). */
export function checkLines(evidence: unknown): string[] {
  if (!isRecord(evidence) || !Array.isArray(evidence.checks)) return [];
  const out: string[] = [];
  for (const check of evidence.checks) {
    if (!isRecord(check)) continue;
    const name = typeof check.name === 'string' ? check.name : '?';
    const exitCode = typeof check.exit_code === 'number' ? check.exit_code : null;
    const ms = typeof check.duration_ms === 'number' ? `, ${Math.round(check.duration_ms)} ms` : '';
    if (exitCode === 0) {
      out.push(`check ${name}: passed${ms}`);
      continue;
    }
    const why = check.timed_out === true ? 'timed out' : exitCode === null ? 'did not finish' : `exit ${exitCode}`;
    out.push(`check ${name}: FAILED (${why}${ms})`);
    const tail = typeof check.output_tail === 'string' ? check.output_tail.trimEnd() : '';
    const lines = tail === '' ? ['(no output)'] : tail.split('\n').slice(-FAILED_OUTPUT_LINES);
    out.push(...lines.map((l) => `  │ ${l}`));
  }
  return out;
}
