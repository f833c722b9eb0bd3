import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { IndicatorState } from '../../src/loop/indicators.js';
import { isMarkerPath, markerDirInside, markerFileName, markerSlug, renderMarker, writeMarker, type MarkerInput } from '../../src/loop/markers.js';

// Local time on purpose: markers are named in the user's clock.
const date = new Date(2026, 0, 5, 9, 7, 30);

describe('markerFileName', () => {
  it.each([
    ['complete', 'fix-tests', '.agent/.context-markers/2026-01-05-0907_fix-tests.md'],
    ['partial', 'fix-tests', '.agent/.context-markers/2026-01-05-0907_fix-tests_loop-partial.md'],
    ['aborted', 'fix-tests', '.agent/.context-markers/2026-01-05-0907_fix-tests_loop-aborted.md'],
    ['complete', 'Fix the tests / now!', '.agent/.context-markers/2026-01-05-0907_Fix-the-tests-now.md'],
    ['complete', '../../etc/passwd', '.agent/.context-markers/2026-01-05-0907_etc-passwd.md'],
  ] as const)('%s %j → %s', (kind, name, path) => {
    expect(markerFileName(date, name, kind)).toBe(path);
  });

  it.each([
    ['', 'task'],
    ['...', 'task'],
    ['a'.repeat(80), 'a'.repeat(60)],
    ['.hidden', 'hidden'],
  ])('slug %j → %j', (name, slug) => {
    expect(markerSlug(name)).toBe(slug);
  });

  it.each([
    ['.agent/.context-markers/x.md', true],
    ['./.agent/.context-markers/2026-01-05-0907_a.md', true],
    ['.agent/.context-markers/x.txt', false],
    ['docs/x.md', false],
  ])('isMarkerPath %s → %s', (path, expected) => {
    expect(isMarkerPath(path)).toBe(expected);
  });
});

const indicators: IndicatorState = {
  values: { code_committed: true, tests_passing: true, code_simplified: false, docs_updated: false, ticket_closed: 'skipped', marker_created: false },
  skipped: { ticket_closed: 'no ticket' },
};

const input: MarkerInput = {
  kind: 'complete',
  name: 'fix-tests',
  task: 'Make npm test pass.\nDetails.',
  date: new Date(Date.UTC(2026, 0, 5, 9, 7, 30)),
  runId: 'run_123',
  iteration: 3,
  maxIterations: 8,
  phase: 'VERIFY',
  stateHash: 'a0524c',
  indicators,
  reason: 'EXIT: 2/5 heuristics + explicit signal',
  summary: ['Fixed sum()'],
};

describe('renderMarker', () => {
  it('records iteration/max, phase, hash, indicators and the summary', () => {
    expect(renderMarker(input)).toBe(
      [
        '# Loop complete: fix-tests',
        '',
        '- Task: Make npm test pass.',
        '- Status: complete',
        '- Reason: EXIT: 2/5 heuristics + explicit signal',
        '- Iteration: 3/8',
        '- Phase: VERIFY',
        '- State hash: a0524c',
        '- Run: run_123',
        '- Created: 2026-01-05T09:07:30.000Z',
        '',
        '## Completion indicators',
        '',
        '- [x] Code changes committed',
        '- [x] Tests passing',
        '- [ ] Code simplified',
        '- [ ] Documentation updated',
        '- [ ] Ticket closed (skipped - no ticket)',
        '- [ ] Marker created',
        '',
        '## Summary',
        '',
        '- Fixed sum()',
        '',
      ].join('\n'),
    );
  });

  it('titles partial and aborted markers', () => {
    expect(renderMarker({ ...input, kind: 'partial' }).split('\n')[0]).toBe('# Loop stopped (partial): fix-tests');
    expect(renderMarker({ ...input, kind: 'aborted', runId: undefined })).not.toContain('- Run:');
  });
});

describe('writeMarker', () => {
  let dir = '';
  afterEach(() => {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  it('creates the folders and never overwrites a marker from the same minute', async () => {
    dir = mkdtempSync(join(tmpdir(), 'navi-markers-'));
    const m = { ...input, date };
    const first = await writeMarker(dir, m);
    const second = await writeMarker(dir, { ...m, summary: ['second'] });
    expect(first).toBe('.agent/.context-markers/2026-01-05-0907_fix-tests.md');
    expect(second).toBe('.agent/.context-markers/2026-01-05-0907_fix-tests-2.md');
    expect(readFileSync(join(dir, first), 'utf8')).toContain('- Fixed sum()');
    expect(readFileSync(join(dir, second), 'utf8')).toContain('- second');
  });

  describe('symlinks', () => {
    let outside = '';
    afterEach(() => {
      if (outside !== '') rmSync(outside, { recursive: true, force: true });
    });
    const setUp = (): void => {
      dir = realpathSync(mkdtempSync(join(tmpdir(), 'navi-markers-')));
      outside = realpathSync(mkdtempSync(join(tmpdir(), 'navi-markers-outside-')));
    };

    it.each([
      ['.agent is a symlink out', (): void => symlinkSync(outside, join(dir, '.agent'))],
      ['.agent/.context-markers is a symlink out', (): void => (mkdirSync(join(dir, '.agent')), symlinkSync(outside, join(dir, '.agent', '.context-markers')))],
      ['.agent is a dangling symlink', (): void => symlinkSync(join(outside, 'not-yet'), join(dir, '.agent'))],
    ])('%s: refused, nothing written outside', async (_what, plant) => {
      setUp();
      plant();
      expect(markerDirInside(dir).ok).toBe(false);
      await expect(writeMarker(dir, { ...input, date })).rejects.toThrow(/(leads outside the working directory through a symlink|dangling symlink); no marker written$/);
      expect(readdirSync(outside)).toEqual([]);
    });

    it('a symlinked .agent that stays inside is fine', async () => {
      setUp();
      mkdirSync(join(dir, 'state'));
      symlinkSync(join(dir, 'state'), join(dir, '.agent'));
      const rel = await writeMarker(dir, { ...input, date });
      expect(readFileSync(join(dir, 'state', '.context-markers', rel.split('/').at(-1) ?? ''), 'utf8')).toContain('# Loop complete');
    });

    it('a symlink planted at the marker file name is not followed', async () => {
      setUp();
      mkdirSync(join(dir, '.agent', '.context-markers'), { recursive: true });
      writeFileSync(join(outside, 'target.md'), 'untouched\n');
      symlinkSync(join(outside, 'target.md'), join(dir, markerFileName(date, input.name, 'complete')));
      const rel = await writeMarker(dir, { ...input, date });
      expect(rel).toBe('.agent/.context-markers/2026-01-05-0907_fix-tests-2.md');
      expect(readFileSync(join(outside, 'target.md'), 'utf8')).toBe('untouched\n');
    });
  });
});
