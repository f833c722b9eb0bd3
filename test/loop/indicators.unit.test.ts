import { describe, expect, it } from 'vitest';
import { emptyEvidence, isDocPath, isTestCommand, type Evidence } from '../../src/loop/evidence.js';
import {
  SKIP_NOT_GIT,
  countMet,
  deriveIndicators,
  metIndicatorNames,
  unmetIndicatorNames,
  type IndicatorName,
  type IndicatorValue,
  type IndicatorValues,
} from '../../src/loop/indicators.js';

const ev = (over: Partial<Evidence>): Evidence => ({ ...emptyEvidence(), ...over });
const check = (exitCode: number | null) => ({ name: `c${String(exitCode)}`, exitCode, durationMs: 10, outputTail: '' });

describe('deriveIndicators', () => {
  it.each<[string, Partial<Evidence>, IndicatorName, IndicatorValue]>([
    ['commits and clean tree', { commitsSinceStart: 1 }, 'code_committed', true],
    ['commits but dirty tracked files', { commitsSinceStart: 2, uncommittedTrackedChanges: true }, 'code_committed', false],
    ['no commits', { commitsSinceStart: 0 }, 'code_committed', false],
    ['not a git repository', { gitRepo: false, commitsSinceStart: 0 }, 'code_committed', 'skipped'],
    ['all checks pass', { checks: [check(0), check(0)] }, 'tests_passing', true],
    ['one check fails', { checks: [check(0), check(1)] }, 'tests_passing', false],
    ['a check timed out', { checks: [check(null)] }, 'tests_passing', false],
    ['checks decide over agent test runs', { checks: [check(1)], testRuns: [{ command: 'npm test', exitCode: 0 }] }, 'tests_passing', false],
    ['no checks, last agent run passed', { testRuns: [{ command: 'npm test', exitCode: 1 }, { command: 'npm test', exitCode: 0 }] }, 'tests_passing', true],
    ['no checks, last agent run failed', { testRuns: [{ command: 'npm test', exitCode: 0 }, { command: 'npm test', exitCode: 1 }] }, 'tests_passing', false],
    ['no checks, no test run (nothing to pass: a non-code task)', {}, 'tests_passing', 'skipped'],
    ['a check that did not finish fails', { checks: [check(null)] }, 'tests_passing', false],
    ['declared simplified', { codeSimplifiedDeclared: true }, 'code_simplified', true],
    ['not declared', {}, 'code_simplified', false],
    ['README changed since start', { filesChangedSinceStart: ['src/a.ts', 'README.md'] }, 'docs_updated', true],
    ['only code changed', { filesChangedSinceStart: ['src/a.ts'] }, 'docs_updated', false],
    ['only a marker written', { filesChangedSinceStart: ['.agent/.context-markers/x.md'] }, 'docs_updated', false],
    ['no ticket', { ticket: null }, 'ticket_closed', 'skipped'],
    ['ticket closed', { ticket: { exitCode: 0 } }, 'ticket_closed', true],
    ['ticket open', { ticket: { exitCode: 1 } }, 'ticket_closed', false],
    ['marker written', { markerWritten: true }, 'marker_created', true],
    ['no marker', {}, 'marker_created', false],
  ])('%s → %s = %s', (_name, evidence, indicator, value) => {
    expect(deriveIndicators(ev(evidence)).values[indicator]).toBe(value);
  });

  it('says why skipped indicators are skipped', () => {
    expect(deriveIndicators(ev({ gitRepo: false })).skipped).toEqual({ code_committed: SKIP_NOT_GIT, tests_passing: 'no checks or test command', ticket_closed: 'no ticket' });
    expect(SKIP_NOT_GIT).toContain('not a git repository');
    expect(deriveIndicators(ev({ ticket: { exitCode: 0 }, testRuns: [{ command: 'npm test', exitCode: 1 }] })).skipped).toEqual({});
  });

  it('a model that claims done without work meets nothing', () => {
    const state = deriveIndicators(ev({ toolCalls: 0, checks: [check(1)] }));
    expect(countMet(state.values)).toEqual({ met: 0, total: 5 });
  });
});

describe('countMet', () => {
  const values = (over: Partial<IndicatorValues>): IndicatorValues => ({
    code_committed: false,
    tests_passing: false,
    code_simplified: false,
    docs_updated: false,
    ticket_closed: false,
    marker_created: false,
    ...over,
  });
  it.each<[Partial<IndicatorValues>, { met: number; total: number }]>([
    [{}, { met: 0, total: 6 }],
    [{ ticket_closed: 'skipped' }, { met: 0, total: 5 }],
    [{ ticket_closed: 'skipped', code_committed: 'skipped', tests_passing: true }, { met: 1, total: 4 }],
    [{ code_committed: true, tests_passing: true, docs_updated: true, marker_created: true, ticket_closed: 'skipped', code_simplified: true }, { met: 5, total: 5 }],
  ])('%j → %j', (over, expected) => {
    expect(countMet(values(over))).toEqual(expected);
  });

  it('lists met and unmet names in display order, skipped in neither', () => {
    const v = values({ tests_passing: true, code_committed: true, ticket_closed: 'skipped' });
    expect(metIndicatorNames(v)).toEqual(['code_committed', 'tests_passing']);
    expect(unmetIndicatorNames(v)).toEqual(['code_simplified', 'docs_updated', 'marker_created']);
  });
});

describe('isDocPath', () => {
  it.each([
    ['README.md', true],
    ['docs/ARCHITECTURE.md', true],
    ['docs/diagram.svg', true],
    ['packages/x/doc/guide.rst', true],
    ['CHANGELOG', true],
    ['./notes.mdx', true],
    ['src/a.ts', false],
    ['requirements.txt', false],
    ['.agent/.context-markers/2026-01-01-1200_x.md', false],
    ['src/docstring.ts', false],
  ])('%s → %s', (path, expected) => {
    expect(isDocPath(path)).toBe(expected);
  });
});

describe('isTestCommand', () => {
  it.each([
    ['npm test', true],
    ['npm run test:unit', true],
    ['npm t', true],
    ['yarn test --watch=false', true],
    ['pnpm vitest run', true],
    ['npx vitest run test/a.test.ts', true],
    ['cd pkg && npm test', true],
    ['CI=1 npm test 2>&1 | tail -20', true],
    ['timeout 60 pytest -q', true],
    ['python -m pytest tests/', true],
    ['python3 -m unittest discover', true],
    ['go test ./...', true],
    ['cargo test', true],
    ['cargo check', false],
    ['make check', true],
    ['make build', false],
    ['bundle exec rspec', true],
    ['node --test', true],
    ['npm run build', false],
    ['npm install', false],
    ['cat test/a.test.ts', false],
    ['grep -r test src', false],
    ['echo "npm test"', false],
  ])('%s → %s', (cmd, expected) => {
    expect(isTestCommand(cmd)).toBe(expected);
  });
});
