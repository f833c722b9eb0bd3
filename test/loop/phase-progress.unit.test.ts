import { describe, expect, it } from 'vitest';
import { emptyEvidence } from '../../src/loop/evidence.js';
import { detectPhase, phaseInputFromEvidence, type Phase, type PhaseInput } from '../../src/loop/phase.js';
import { computeProgress } from '../../src/loop/progress.js';

const base: PhaseInput = { filesRead: [], filesChanged: [], testsRunning: false, lastTestExitCode: undefined, met: 0, exitSignal: false };

describe('detectPhase (navigator precedence)', () => {
  it.each<[string, Partial<PhaseInput>, Phase]>([
    ['nothing happened', {}, 'INIT'],
    ['files read', { filesRead: ['a.ts'] }, 'RESEARCH'],
    ['files changed', { filesRead: ['a.ts'], filesChanged: ['a.ts'] }, 'IMPL'],
    ['tests passed', { filesChanged: ['a.ts'], lastTestExitCode: 0 }, 'VERIFY'],
    ['tests failed', { filesChanged: ['a.ts'], lastTestExitCode: 1 }, 'IMPL'],
    ['tests failed, nothing changed', { lastTestExitCode: 2 }, 'IMPL'],
    ['tests did not finish', { lastTestExitCode: null }, 'IMPL'],
    ['tests running outranks a failed run', { testsRunning: true, lastTestExitCode: 1 }, 'VERIFY'],
    ['4 met + signal', { met: 4, exitSignal: true, lastTestExitCode: 1 }, 'COMPLETE'],
    ['4 met, no signal', { met: 4, lastTestExitCode: 0 }, 'VERIFY'],
    ['3 met + signal', { met: 3, exitSignal: true, filesChanged: ['a'] }, 'IMPL'],
    ['6 met + signal', { met: 6, exitSignal: true }, 'COMPLETE'],
  ])('%s → %s', (_name, input, phase) => {
    expect(detectPhase({ ...base, ...input }).phase).toBe(phase);
  });

  it('says why and what comes next', () => {
    expect(detectPhase({ ...base, filesChanged: ['a', 'b'] })).toEqual({
      phase: 'IMPL',
      reason: 'Files modified: 2 files',
      nextExpected: 'Continue implementation or run tests',
    });
    expect(detectPhase({ ...base, lastTestExitCode: 1 }).nextExpected).toBe('Fix failing tests');
  });
});

describe('phaseInputFromEvidence', () => {
  it('uses the last agent test run, not the runner checks', () => {
    const e = {
      ...emptyEvidence(),
      filesRead: ['a.ts'],
      testRuns: [
        { command: 'npm test', exitCode: 1 },
        { command: 'npm test', exitCode: 0 },
      ],
      checks: [{ name: 'tests', exitCode: 1, durationMs: 5, outputTail: 'FAIL' }],
    };
    expect(phaseInputFromEvidence(e, 2, true)).toEqual({
      filesRead: ['a.ts'],
      filesChanged: [],
      testsRunning: false,
      lastTestExitCode: 0,
      met: 2,
      exitSignal: true,
    });
  });

  it('an iteration spent reading stays RESEARCH even when checks fail', () => {
    const e = { ...emptyEvidence(), filesRead: ['a.ts'], checks: [{ name: 't', exitCode: 1, durationMs: 5, outputTail: '' }] };
    expect(detectPhase(phaseInputFromEvidence(e, 0, false)).phase).toBe('RESEARCH');
  });
});

describe('computeProgress', () => {
  it.each<[Phase, number, number, number]>([
    ['INIT', 0, 6, 10],
    ['RESEARCH', 0, 6, 25],
    ['IMPL', 0, 5, 50],
    ['IMPL', 2, 3, 66],
    ['IMPL', 1, 5, 55],
    ['VERIFY', 2, 5, 85],
    ['VERIFY', 2, 3, 91],
    ['VERIFY', 5, 5, 100],
    ['COMPLETE', 4, 5, 100],
    ['COMPLETE', 0, 6, 100],
    ['INIT', 0, 0, 10],
    ['VERIFY', 1, 6, 79],
  ])('%s with %d/%d → %d%%', (phase, met, total, pct) => {
    expect(computeProgress(phase, met, total)).toBe(pct);
  });
});
