/**
 * Phase detection with navigator's precedence (phase_detector.py, SPEC §7.5): the first rule
 * that holds wins, so a finished test run outranks file changes and file changes outrank reads.
 */

import type { Evidence } from './evidence.js';

/** Phases in order of progress (seed 004). */
export const PHASES = ['INIT', 'RESEARCH', 'IMPL', 'VERIFY', 'COMPLETE'] as const;

/** One loop phase. */
export type Phase = (typeof PHASES)[number];

/** Met indicators COMPLETE needs (navigator's COMPLETE_THRESHOLD, stricter than the gate's 2). */
export const COMPLETE_THRESHOLD = 4;

/** What phase detection looks at. */
export interface PhaseInput {
  /** Files read this iteration. */
  filesRead: readonly string[];
  /** Files changed this iteration. */
  filesChanged: readonly string[];
  /** A test run is still in progress. */
  testsRunning: boolean;
  /** Exit code of the last test run this iteration; null = it did not finish; undefined = none ran. */
  lastTestExitCode: number | null | undefined;
  /** Met indicators (of the applicable ones). */
  met: number;
  /** An accepted exit signal this iteration. */
  exitSignal: boolean;
}

/** The detected phase and why, in navigator's words. */
export interface PhaseResult {
  /** The phase. */
  phase: Phase;
  /** Which rule decided it. */
  reason: string;
  /** What navigator expects next in this phase (feeds the status block's Next Action). */
  nextExpected: string;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Detects the phase of one iteration (navigator precedence; first match wins). */
export function detectPhase(input: PhaseInput): PhaseResult {
  if (input.met >= COMPLETE_THRESHOLD && input.exitSignal) {
    return {
      phase: 'COMPLETE',
      reason: `Exit conditions met (${input.met} indicators + EXIT_SIGNAL)`,
      nextExpected: 'Execute the completion protocol',
    };
  }
  if (input.testsRunning) {
    return { phase: 'VERIFY', reason: 'Tests currently running', nextExpected: 'Wait for test results, then evaluate' };
  }
  if (input.lastTestExitCode !== undefined) {
    if (input.lastTestExitCode === 0) {
      return { phase: 'VERIFY', reason: 'Tests completed (exit code: 0)', nextExpected: 'Commit changes if tests pass' };
    }
    // A test run that did not finish did not pass: treat it like a failure.
    const code = input.lastTestExitCode === null ? 'did not finish' : `exit code: ${input.lastTestExitCode}`;
    return { phase: 'IMPL', reason: `Tests failed (${code})`, nextExpected: 'Fix failing tests' };
  }
  if (input.filesChanged.length > 0) {
    return {
      phase: 'IMPL',
      reason: `Files modified: ${plural(input.filesChanged.length, 'file')}`,
      nextExpected: 'Continue implementation or run tests',
    };
  }
  if (input.filesRead.length > 0) {
    return {
      phase: 'RESEARCH',
      reason: `Files read: ${plural(input.filesRead.length, 'file')}, no changes yet`,
      nextExpected: 'Start implementation based on research',
    };
  }
  return { phase: 'INIT', reason: 'No significant activity detected', nextExpected: 'Load context and understand requirements' };
}

/**
 * The phase input of an iteration. Only the agent's own test runs count as "tests run": the
 * runner's checks run after every iteration, so counting them would pin every task with checks
 * to VERIFY/IMPL and hide an iteration spent reading (RESEARCH). Checks drive `tests_passing`
 * and the error digest instead.
 */
export function phaseInputFromEvidence(e: Evidence, met: number, exitSignal: boolean): PhaseInput {
  const last = e.testRuns[e.testRuns.length - 1];
  return {
    filesRead: e.filesRead,
    filesChanged: e.filesChanged,
    testsRunning: e.testsRunning === true,
    lastTestExitCode: last === undefined ? undefined : last.exitCode,
    met,
    exitSignal,
  };
}
