import { describe, expect, it } from 'vitest';
import { evaluateGate, nextAction, type GateDecision } from '../../src/loop/gate.js';
import type { IndicatorValues } from '../../src/loop/indicators.js';
import { detectPhase } from '../../src/loop/phase.js';

/** Values with the first `met` of the five applicable indicators true and the ticket skipped. */
function values(met: number): IndicatorValues {
  const order = ['code_committed', 'tests_passing', 'code_simplified', 'docs_updated', 'marker_created'] as const;
  const v: IndicatorValues = {
    code_committed: false,
    tests_passing: false,
    code_simplified: false,
    docs_updated: false,
    ticket_closed: 'skipped',
    marker_created: false,
  };
  order.slice(0, met).forEach((name) => (v[name] = true));
  return v;
}

describe('evaluateGate (seed 004 truth table)', () => {
  it.each<[number, boolean, boolean, GateDecision, string]>([
    // heuristics ≥ 2 AND signal → EXIT
    [2, true, true, 'exit', 'EXIT: 2/5 heuristics + explicit signal'],
    [5, true, true, 'exit', 'EXIT: 5/5 heuristics + explicit signal'],
    [2, true, false, 'exit', 'EXIT: 2/5 heuristics + explicit signal'],
    // heuristics ≥ 2, no signal → CONTINUE awaiting (or EXIT without the explicit requirement)
    [2, false, true, 'continue', 'CONTINUE: 2/5 heuristics, awaiting EXIT_SIGNAL'],
    [4, false, true, 'continue', 'CONTINUE: 4/5 heuristics, awaiting EXIT_SIGNAL'],
    [2, false, false, 'exit', 'EXIT: 2/5 heuristics (explicit signal not required)'],
    // signal with < 2 → BLOCKED
    [1, true, true, 'blocked', 'BLOCKED: Exit signal but only 1/5 heuristics'],
    [0, true, true, 'blocked', 'BLOCKED: Exit signal but only 0/5 heuristics'],
    [1, true, false, 'blocked', 'BLOCKED: Exit signal but only 1/5 heuristics'],
    // otherwise CONTINUE
    [1, false, true, 'continue', 'CONTINUE: 1/5 heuristics, no exit signal'],
    [0, false, false, 'continue', 'CONTINUE: 0/5 heuristics, no exit signal'],
    [1, false, false, 'continue', 'CONTINUE: 1/5 heuristics, no exit signal'],
  ])('%d met, signal %s, require %s → %s', (met, exitSignal, requireExplicitSignal, decision, reason) => {
    const r = evaluateGate({ indicators: values(met), exitSignal, requireExplicitSignal });
    expect(r.decision).toBe(decision);
    expect(r.reason).toBe(reason);
    expect([r.met, r.total]).toEqual([met, 5]);
    expect(r.feedback !== undefined).toBe(decision === 'blocked');
  });

  it('tells the model what is unmet when it blocks', () => {
    const r = evaluateGate({ indicators: values(1), exitSignal: true, requireExplicitSignal: true });
    expect(r.feedback).toBe(
      'Your exit signal was not accepted: only 1/5 completion indicators are met and at least 2 are needed. ' +
        'Not met yet: tests passing, code simplified, documentation updated, marker created. ' +
        'These are checked by the runner from evidence (checks, git, changed files), not from your report: ' +
        'finish the remaining work, verify it, then signal again.',
    );
  });
});

describe('nextAction', () => {
  const phase = detectPhase({ filesRead: [], filesChanged: ['a'], testsRunning: false, lastTestExitCode: undefined, met: 0, exitSignal: false });
  it.each<[number, boolean, string]>([
    [3, true, 'Exit: task complete'],
    [1, true, 'Meet at least 2 completion indicators before signalling exit'],
    [3, false, 'Emit the exit signal if the task is complete'],
    [0, false, 'Continue implementation or run tests'],
  ])('%d met, signal %s → %s', (met, exitSignal, text) => {
    expect(nextAction(evaluateGate({ indicators: values(met), exitSignal, requireExplicitSignal: true }), phase)).toBe(text);
  });
});
