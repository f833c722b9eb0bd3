/**
 * `githubAnnotations`: which `::error`/`::warning` workflow commands a run produces, and that
 * messages and titles are escaped the way the Actions runner reads them (a newline or `%` in a
 * message, a `:` or `,` in a title, would otherwise cut the command short).
 */
import { describe, expect, it } from 'vitest';
import { githubAnnotations } from '../../src/report/annotations.js';
import { buildRunReport } from '../../src/report/run-report.js';
import type { LoopIterationRecord, LoopRunRecord } from '../../src/store/loop-run-types.js';
import { storedIteration, storedRun } from './report-fixtures.js';

const CASES: Array<{ name: string; run: LoopRunRecord; iterations: LoopIterationRecord[]; exitCode?: number; expected: string[] }> = [
  {
    name: 'completed: a check that failed earlier and passed later is not annotated',
    run: storedRun(),
    iterations: [storedIteration(1, { checks: [{ name: 'tests', exit: 1 }] }), storedIteration(2, { gateDecision: 'exit', checks: [{ name: 'tests', exit: 0 }] })],
    expected: [],
  },
  {
    name: 'completed after a blocked exit: one warning',
    run: storedRun(),
    iterations: [storedIteration(1, { gateDecision: 'blocked', gateReason: 'BLOCKED: Exit signal but only 1/5 heuristics' }), storedIteration(2, { gateDecision: 'exit' })],
    expected: ['::warning title=navi loop fix-add%3A exit blocked in iteration 1::BLOCKED: Exit signal but only 1/5 heuristics'],
  },
  {
    name: 'incomplete with a check still failing: the check, then the run',
    run: storedRun({ status: 'incomplete', reason: 'max_iterations' }),
    iterations: [storedIteration(1, { gateReason: 'CONTINUE: 0/5 heuristics, no exit signal', checks: [{ name: 'unit, e2e', exit: 1, out: 'line 1\n100% broken' }, { name: 'lint', exit: 0 }] })],
    expected: [
      '::error title=navi loop fix-add%3A check unit%2C e2e failing::exit code 1 in iteration 1%0Aline 1%0A100%25 broken',
      '::error title=navi loop fix-add%3A incomplete::incomplete (max_iterations): the exit gate said: CONTINUE: 0/5 heuristics, no exit signal (exit code 3; run run_0test_abcd)',
    ],
  },
  {
    name: 'failed before any iteration, with its real exit code',
    run: storedRun({ status: 'failed', reason: 'replay_mismatch', iteration: 0 }),
    iterations: [],
    exitCode: 2,
    expected: ['::error title=navi loop fix-add%3A failed::failed (replay_mismatch): no iteration was committed (exit code 2; run run_0test_abcd)'],
  },
];

describe('githubAnnotations', () => {
  for (const c of CASES) {
    it(c.name, () => {
      expect(githubAnnotations(buildRunReport(c.run, c.iterations, c.exitCode))).toEqual(c.expected);
    });
  }
});
