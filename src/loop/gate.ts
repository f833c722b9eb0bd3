/**
 * The dual-condition exit gate (seed 004, navigator's exit_gate.py, SPEC §7.9): the loop ends
 * only when the evidence (≥2 met indicators) and the model (an accepted exit signal) agree.
 *
 * | heuristics ≥ 2 | signal | require signal | decision                       |
 * |----------------|--------|----------------|--------------------------------|
 * | yes            | yes    | any            | exit                           |
 * | yes            | no     | true           | continue (awaiting the signal) |
 * | yes            | no     | false          | exit (heuristics alone)        |
 * | no             | yes    | any            | blocked (feedback to the model)|
 * | no             | no     | any            | continue (more work needed)    |
 */

import { INDICATOR_LABELS, countMet, unmetIndicatorNames, type IndicatorValues } from './indicators.js';
import type { PhaseResult } from './phase.js';

/** Met indicators the gate needs (navigator's MIN_HEURISTICS_DEFAULT) when five or more apply. */
export const MIN_HEURISTICS = 2;

/** Indicators that apply in seed 004's usual case (all but the ticket, with no PM tool). */
const SEED_APPLICABLE = 5;

/**
 * Met indicators the gate needs when `applicable` of the six apply (issue 18 item 18): seed
 * 004's share — 2 of the 5 that apply without a ticket — of those that apply, at least 1. A task
 * that cannot commit (no git) or has nothing to test (no checks, no test command run) is not
 * held to a bar set for indicators it can never meet: 6 or 5 apply → 2; 4 or fewer → 1.
 */
export function requiredHeuristics(applicable: number): number {
  return Math.max(1, Math.floor((MIN_HEURISTICS * applicable) / SEED_APPLICABLE));
}

/** What the gate decided. */
export type GateDecision = 'exit' | 'continue' | 'blocked';

/** What the gate looks at. */
export interface GateInput {
  /** This iteration's indicator values. */
  indicators: IndicatorValues;
  /** An accepted exit signal this iteration (after acceptSignal). */
  exitSignal: boolean;
  /** `loop_mode.exit_requires_explicit_signal`. */
  requireExplicitSignal: boolean;
}

/** The gate's verdict. */
export interface GateResult {
  /** exit: the loop ends successfully; blocked: a signal was refused; continue: next iteration. */
  decision: GateDecision;
  /** One line in navigator's words, e.g. `BLOCKED: Exit signal but only 1/5 heuristics`. */
  reason: string;
  /** Met indicators. */
  met: number;
  /** Applicable indicators. */
  total: number;
  /** Met indicators needed (requiredHeuristics of total). */
  needed: number;
  /** For blocked: the text the next iteration's message carries to the model. */
  feedback?: string;
}

/** Evaluates the gate (truth table above). */
export function evaluateGate(input: GateInput): GateResult {
  const { met, total } = countMet(input.indicators);
  const needed = requiredHeuristics(total);
  const enough = met >= needed;
  const tally = `${met}/${total}`;
  if (enough && input.exitSignal) {
    return { decision: 'exit', reason: `EXIT: ${tally} heuristics + explicit signal`, met, total, needed };
  }
  if (enough) {
    return input.requireExplicitSignal
      ? { decision: 'continue', reason: `CONTINUE: ${tally} heuristics, awaiting EXIT_SIGNAL`, met, total, needed }
      : { decision: 'exit', reason: `EXIT: ${tally} heuristics (explicit signal not required)`, met, total, needed };
  }
  if (input.exitSignal) {
    const unmet = unmetIndicatorNames(input.indicators).map((n) => INDICATOR_LABELS[n].toLowerCase());
    const feedback =
      `Your exit signal was not accepted: only ${tally} completion indicators are met and at least ` +
      `${needed} ${needed === 1 ? 'is' : 'are'} needed. Not met yet: ${unmet.length > 0 ? unmet.join(', ') : 'none'}. ` +
      'These are checked by the runner from evidence (checks, git, changed files), not from your ' +
      'report: finish the remaining work, verify it, then signal again.';
    return { decision: 'blocked', reason: `BLOCKED: Exit signal but only ${tally} heuristics`, met, total, needed, feedback };
  }
  return { decision: 'continue', reason: `CONTINUE: ${tally} heuristics, no exit signal`, met, total, needed };
}

/** The status block's Next Action line for a gate verdict and detected phase. */
export function nextAction(gate: GateResult, phase: PhaseResult): string {
  switch (gate.decision) {
    case 'exit':
      return 'Exit: task complete';
    case 'blocked':
      return `Meet at least ${gate.needed} completion indicator${gate.needed === 1 ? '' : 's'} before signalling exit`;
    case 'continue':
      return gate.met >= gate.needed ? 'Emit the exit signal if the task is complete' : phase.nextExpected;
  }
}
