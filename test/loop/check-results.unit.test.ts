/**
 * A check's result as the live display shows it, and the warning for a check that cannot run at
 * all (issue 18 item 11: exit 126/127 fails every iteration whatever the model does).
 */
import { describe, expect, it } from 'vitest';
import { checkText } from '../../src/cli/loop-text.js';
import { cannotRunWarning } from '../../src/loop/checks.js';

describe('checkText', () => {
  it.each<[string, { exit_code: number | null; duration_ms: number; timed_out: boolean }, string]>([
    ['passed', { exit_code: 0, duration_ms: 420, timed_out: false }, 'tests passed (0.4 s)'],
    ['failed', { exit_code: 1, duration_ms: 2000, timed_out: false }, 'tests failed (exit 1, 2.0 s)'],
    ['command not found', { exit_code: 127, duration_ms: 3, timed_out: false }, 'tests could not run (exit 127: command not found)'],
    ['not executable', { exit_code: 126, duration_ms: 3, timed_out: false }, 'tests could not run (exit 126: not executable)'],
    ['timed out', { exit_code: null, duration_ms: 60000, timed_out: true }, 'tests timed out (60.0 s)'],
    ['stopped', { exit_code: null, duration_ms: 100, timed_out: false }, 'tests did not finish (0.1 s)'],
  ])('%s', (_name, c, text) => {
    expect(checkText({ name: 'tests', ...c })).toBe(text);
  });
});

describe('cannotRunWarning', () => {
  const result = (exitCode: number | null) => ({ name: 'tests', exitCode, durationMs: 5, outputTail: '' });
  it.each<[number | null, string | null]>([
    [127, 'check "tests" cannot run (exit 127: command not found): `nosuch --test`.'],
    [126, 'check "tests" cannot run (exit 126: found but not executable): `nosuch --test`.'],
    [0, null],
    [1, null],
    [2, null],
    [null, null],
  ])('exit %s', (code, start) => {
    const w = cannotRunWarning(result(code), 'nosuch --test');
    if (start === null) expect(w).toBeNull();
    else expect(w).toMatch(new RegExp(`^${start.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} It fails every iteration`));
  });
});
