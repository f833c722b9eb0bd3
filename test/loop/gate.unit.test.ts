import { describe, expect, it } from 'vitest';
import { evaluateGate, nextAction, requiredHeuristics, type GateDecision } from '../../src/loop/gate.js';
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

describe('requiredHeuristics: the threshold counts the indicators that apply (issue 18 item 18)', () => {
  it.each<[number, number]>([
    [6, 2], // a ticket is configured
    [5, 2], // seed 004's usual case: no ticket
    [4, 1], // no ticket, and nothing to test (or no git)
    [3, 1], // no ticket, no git, nothing to test
    [2, 1],
    [1, 1],
  ])('%d applicable → need %d', (applicable, needed) => {
    expect(requiredHeuristics(applicable)).toBe(needed);
  });

  it.each<[string, Partial<IndicatorValues>, boolean, GateDecision, string]>([
    // The user's case: a free-text non-code task, done and committed, signalled — was BLOCKED 1/5.
    ['non-code task committed and signalled', { code_committed: true, tests_passing: 'skipped' }, true, 'exit', 'EXIT: 1/4 heuristics + explicit signal'],
    ['non-code task, signal but nothing met', { tests_passing: 'skipped' }, true, 'blocked', 'BLOCKED: Exit signal but only 0/4 heuristics'],
    ['non-code task committed, no signal', { code_committed: true, tests_passing: 'skipped' }, false, 'continue', 'CONTINUE: 1/4 heuristics, awaiting EXIT_SIGNAL'],
    ['outside git, nothing to test, docs written', { code_committed: 'skipped', tests_passing: 'skipped', docs_updated: true }, true, 'exit', 'EXIT: 1/3 heuristics + explicit signal'],
    ['tests apply and fail: still 2 needed', { code_committed: true, tests_passing: false }, true, 'blocked', 'BLOCKED: Exit signal but only 1/5 heuristics'],
    ['a ticket applies: 2 of 6', { code_committed: true, ticket_closed: false }, true, 'blocked', 'BLOCKED: Exit signal but only 1/6 heuristics'],
  ])('%s', (_name, over, exitSignal, decision, reason) => {
    const r = evaluateGate({ indicators: { ...values(0), ...over }, exitSignal, requireExplicitSignal: true });
    expect([r.decision, r.reason]).toEqual([decision, reason]);
  });

  it('a blocked non-code task is told one indicator is needed', () => {
    const r = evaluateGate({ indicators: { ...values(0), tests_passing: 'skipped' }, exitSignal: true, requireExplicitSignal: true });
    expect(r.feedback).toContain('only 0/4 completion indicators are met and at least 1 is needed');
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
