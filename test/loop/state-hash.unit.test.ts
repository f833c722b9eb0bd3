import { describe, expect, it } from 'vitest';
import type { CheckResult } from '../../src/loop/evidence.js';
import { canonicalStateJson, errorDigest, normalizeOutput, pythonJsonString, stateHash } from '../../src/loop/state-hash.js';

type Case = [phase: string, indicators: Record<string, boolean | 'skipped'>, files: string[], error: string | null, hash: string];

describe('stateHash (byte-compatible with navigator)', () => {
  // Expected hashes computed with navigator's stagnation_detector.calculate_state_hash (Python 3.11).
  it.each<Case>([
    ['INIT', {}, [], null, '9ea082'],
    ['IMPL', { code_committed: true }, ['a.ts', 'b.ts'], null, 'a0524c'],
    ['IMPL', { code_committed: true }, ['b.ts', 'a.ts'], null, 'a0524c'],
    ['VERIFY', { tests_passing: true, code_committed: true, docs_updated: false }, ['src/x.ts'], '3f2a9c1b7e4d', '3ec62e'],
    ['RESEARCH', {}, [], 'tab\there "q" back\\slash /', 'bdfec6'],
    ['IMPL', {}, ['docs/résumé.md', 'src/日本.ts', 'z😀.ts', 'a\uff5e.ts'], null, 'be8def'],
    ['IMPL', {}, ['😀.ts', '\uff5e.ts'], null, 'ddb4c9'],
    [
      'COMPLETE',
      { code_committed: true, tests_passing: true, code_simplified: true, docs_updated: true, ticket_closed: true, marker_created: true },
      ['a'],
      null,
      '6c75ec',
    ],
    ['IMPL', {}, ['ctl\u0001\u007f.ts'], 'line1\nline2\r\b\f', '848b42'],
  ])('%s %j %j %j → %s', (phase, indicators, filesChanged, errorState, hash) => {
    expect(stateHash({ phase, indicators, filesChanged, errorState })).toBe(hash);
  });

  it('leaves skipped and false indicators out, like an empty set', () => {
    const skipped = stateHash({ phase: 'INIT', indicators: { ticket_closed: 'skipped', code_committed: false }, filesChanged: [], errorState: null });
    expect(skipped).toBe('9ea082');
  });

  it('writes the canonical form navigator hashes', () => {
    expect(canonicalStateJson({ phase: 'IMPL', indicators: { tests_passing: true, code_committed: true }, filesChanged: ['b', 'a'], errorState: 'e' })).toBe(
      '{"error_state": "e", "files_changed": ["a", "b"], "indicators": ["code_committed", "tests_passing"], "phase": "IMPL"}',
    );
  });

  it('a different error state gives a different hash', () => {
    const base = { phase: 'IMPL', indicators: {}, filesChanged: ['a.ts'] };
    expect(stateHash({ ...base, errorState: 'aaa' })).not.toBe(stateHash({ ...base, errorState: 'bbb' }));
  });
});

describe('pythonJsonString', () => {
  it.each([
    ['plain', '"plain"'],
    ['a/b', '"a/b"'],
    ['"\\', '"\\"\\\\"'],
    ['\n\r\t\b\f', '"\\n\\r\\t\\b\\f"'],
    ['\u0000\u001f\u007f', '"\\u0000\\u001f\\u007f"'],
    ['é', '"\\u00e9"'],
    ['😀', '"\\ud83d\\ude00"'],
  ])('%j → %s', (input, out) => {
    expect(pythonJsonString(input)).toBe(out);
  });
});

function check(name: string, exitCode: number | null, outputTail: string, durationMs = 1000): CheckResult {
  return { name, exitCode, outputTail, durationMs };
}

describe('errorDigest', () => {
  it('is null when every check passes or there are none', () => {
    expect(errorDigest([])).toBeNull();
    expect(errorDigest([check('tests', 0, 'ok'), check('lint', 0, '')])).toBeNull();
  });

  it('is a 12-hex digest when a check fails', () => {
    expect(errorDigest([check('tests', 1, 'FAIL a.test.ts')])).toMatch(/^[0-9a-f]{12}$/);
  });

  it('is the same for the same failure with different timings, timestamps and colours', () => {
    const a = '\u001b[31mFAIL\u001b[0m src/a.test.ts > adds (12ms)\n Test Files  1 failed (1)\n Start at  10:01:02\n Duration  1.52s\n at 2026-01-05T10:01:02.123Z';
    const b = 'FAIL src/a.test.ts > adds (9 ms)\n Test Files  1 failed (1)\n Start at  23:59:59\n Duration  3.07s\n at 2026-02-11T08:00:00.999Z';
    expect(errorDigest([check('tests', 1, a, 1520)])).toBe(errorDigest([check('tests', 1, b, 3070)]));
  });

  it('changes when the failure changes (real progress on a red suite)', () => {
    const before = errorDigest([check('tests', 1, 'Tests  3 failed | 5 passed')]);
    const after = errorDigest([check('tests', 1, 'Tests  1 failed | 7 passed')]);
    expect(before).not.toBe(after);
  });

  it('depends on which check fails and how', () => {
    const out = 'boom';
    const digests = new Set([
      errorDigest([check('tests', 1, out)]),
      errorDigest([check('lint', 1, out)]),
      errorDigest([check('tests', 2, out)]),
      errorDigest([check('tests', null, out)]),
    ]);
    expect(digests.size).toBe(4);
  });

  it('ignores passing checks', () => {
    const failing = check('tests', 1, 'FAIL');
    expect(errorDigest([check('lint', 0, 'ok, 5ms'), failing])).toBe(errorDigest([failing]));
  });
});

describe('normalizeOutput', () => {
  it.each([
    ['Duration 1.5s (transform 20ms)', 'Duration <dur> (transform <dur>)'],
    ['took 3 seconds', 'took <dur>'],
    ['at 0x7ffd1234abcd', 'at <addr>'],
    ['wrote /tmp/navi-abc123/x.txt', 'wrote <tmp>'],
    ['3 failed | 5 passed', '3 failed | 5 passed'],
    ['line   \r\n\n\nnext', 'line\nnext'],
  ])('%j → %j', (input, out) => {
    expect(normalizeOutput(input)).toBe(out);
  });

  it('keeps only the last 40 non-empty lines', () => {
    const text = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n');
    const out = normalizeOutput(text).split('\n');
    expect(out).toHaveLength(40);
    expect(out[0]).toBe('line 60');
  });
});
