/**
 * The pure pieces behind usage errors and help (issue 11, bug 7): the flag meant for a typo,
 * numeric flags named as typed, the help width, and the check lines of `runs show`.
 */
import { describe, expect, it } from 'vitest';
import { checkLines } from '../../src/cli/check-lines.js';
import { integerFlag } from '../../src/cli/flag-values.js';
import { examplesText, helpWidth } from '../../src/cli/help-layout.js';
import { dedupeUnknown, suggestFlag, usageMessage } from '../../src/cli/usage-error.js';
import { InvalidInputError } from '../../src/errors.js';

const RUN_FLAGS = ['file', 'f', 'session', 's', 'max-iterations', 'loop', 'cwd', 'config', 'output', 'o', 'quiet', 'q', 'color', 'db', 'ollama-host', 'model', 'm', 'profile', 'p', 'help', 'h'];

describe('suggestFlag', () => {
  it.each([
    ['max-iteration', 'max-iterations'],
    ['max-iterationz', 'max-iterations'],
    ['sesion', 'session'],
    ['ollama-hots', 'ollama-host'],
    ['modle', 'model'],
    ['outptu', 'output'],
    ['zzzz', null],
    ['x', null],
    ['verbose', null],
  ])('%s → %s', (typed, want) => {
    expect(suggestFlag(typed, RUN_FLAGS)).toBe(want);
  });
});

describe('usageMessage', () => {
  it('names the flag with its dashes, the one meant, and the command’s --help', () => {
    expect(usageMessage('Unknown argument: sesion', { path: 'run', flags: RUN_FLAGS })).toBe(
      "Unknown argument: --sesion\nDid you mean --session (not --sesion)?\nRun 'navi run --help' for usage.",
    );
  });

  it('points to the top-level help when no command was recognised', () => {
    expect(usageMessage('Unknown argument: frobnicate', null)).toBe("Unknown argument: --frobnicate\nRun 'navi --help' for usage.");
  });

  it('drops the camelCase twin yargs adds', () => {
    expect(dedupeUnknown('Unknown arguments: bogus-flag, bogusFlag')).toBe('Unknown argument: --bogus-flag');
  });
});

describe('integerFlag', () => {
  it.each([
    ['3', 3],
    [' 12 ', 12],
    [7, 7],
  ])('%j → %d', (raw, want) => {
    expect(integerFlag('max-iterations', raw)).toBe(want);
  });

  it.each([
    ['abc', "--max-iterations must be a positive integer (got 'abc')"],
    ['2.5', "--max-iterations must be a positive integer (got '2.5')"],
    ['0', "--max-iterations must be a positive integer (got '0')"],
    ['', "--max-iterations must be a positive integer (got '')"],
    [true, '--max-iterations must be a positive integer (got no value)'],
    ['1e3', "--max-iterations must be a positive integer (got '1e3')"],
  ])('%j: exit 2 naming the value', (raw, message) => {
    let error: unknown;
    try {
      integerFlag('max-iterations', raw);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).message).toBe(message);
    expect((error as InvalidInputError).exitCode).toBe(2);
  });
});

describe('helpWidth', () => {
  it.each([
    [120, {}, 100],
    [80, {}, 80],
    [undefined, {}, 80],
    [undefined, { COLUMNS: '60' }, 60],
    [undefined, { COLUMNS: 'wide' }, 80],
    [0, { COLUMNS: '90' }, 90],
  ])('columns %s, env %j → %d', (columns, env, want) => {
    expect(helpWidth(columns, env)).toBe(want);
  });
});

describe('examplesText', () => {
  it('keeps each command line whole, its description below it', () => {
    expect(examplesText([['navi loop "make npm test pass" --max-iterations 8 --never-pause', 'free text'], ['navi doctor', '']])).toBe(
      'Examples:\n  navi loop "make npm test pass" --max-iterations 8 --never-pause\n      free text\n  navi doctor',
    );
  });
});

describe('checkLines', () => {
  it('a passed check on one line; a failed one with why and the end of its output', () => {
    const evidence = {
      checks: [
        { name: 'lint', exit_code: 0, duration_ms: 120, timed_out: false, output_tail: 'ok' },
        { name: 'tests', exit_code: 1, duration_ms: 340.6, timed_out: false, output_tail: 'not ok 1 - add adds\n  expected 5, got -1\n' },
        { name: 'slow', exit_code: null, duration_ms: 60000, timed_out: true, output_tail: '' },
      ],
    };
    expect(checkLines(evidence)).toEqual([
      'check lint: passed, 120 ms',
      'check tests: FAILED (exit 1, 341 ms)',
      '  │ not ok 1 - add adds',
      '  │   expected 5, got -1',
      'check slow: FAILED (timed out, 60000 ms)',
      '  │ (no output)',
    ]);
  });

  it('shows the last lines of a long output only', () => {
    const tail = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`).join('\n');
    const lines = checkLines({ checks: [{ name: 't', exit_code: 2, duration_ms: 1, output_tail: tail }] });
    expect(lines[1]).toBe('  │ line 26');
    expect(lines.at(-1)).toBe('  │ line 40');
  });

  it('nothing for an iteration without checks or evidence', () => {
    expect(checkLines(null)).toEqual([]);
    expect(checkLines({ checks: [] })).toEqual([]);
  });
});
