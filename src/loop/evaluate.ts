/**
 * One iteration judged from its evidence (SPEC §7 steps 3–6 and 9): indicators, the exit
 * signal after acceptance, phase, the state hash with the failing checks' digest, the
 * consecutive count shown in the status block, the gate's verdict and the NAVIGATOR_STATUS
 * block. Pure: the runner applies approvals, stagnation and max iterations afterwards.
 */
import type { Evidence } from './evidence.js';
import { evaluateGate, nextAction, type GateResult } from './gate.js';
import { countMet, deriveIndicators, SKIP_NO_TESTS, SKIP_NO_TICKET, SKIP_NOT_GIT, type IndicatorState, type IndicatorValues } from './indicators.js';
import { detectPhase, phaseInputFromEvidence, type PhaseResult } from './phase.js';
import { resolveExitSignal, type ExitSignal } from './exit-signal.js';
import { consecutiveCount } from './stagnation.js';
import { errorDigest, stateHash } from './state-hash.js';
import { renderStatusBlock, statusFields, type StatusFields } from './status-block.js';

/** What evaluateIteration needs besides the evidence. */
export interface EvaluateInput {
  evidence: Evidence;
  /** The model's final text of the iteration. */
  finalText: string;
  /** Arguments of its loop_signal calls. */
  signalArgs: readonly unknown[];
  iteration: number;
  maxIterations: number;
  /** Recorded hashes since the last reset (not including this iteration). */
  hashHistory: readonly string[];
  /** The last recorded hash of the run (shown as Previous Hash), null before the first. */
  previousHash: string | null;
  stagnationThreshold: number;
  requireExplicitSignal: boolean;
}

/** The verdicts of one iteration. */
export interface Evaluation {
  indicators: IndicatorState;
  met: number;
  total: number;
  /** The exit signal after acceptance (null: none given). */
  signal: ExitSignal | null;
  phase: PhaseResult;
  /** errorDigest of the failing checks. */
  errorState: string | null;
  hash: string;
  /** Consecutive equal hashes including this one (the block's `Stagnation C/T`). */
  consecutive: number;
  gate: GateResult;
  status: StatusFields;
  block: string;
}

/** Evaluates one iteration (see the module comment). */
export function evaluateIteration(input: EvaluateInput): Evaluation {
  const e = input.evidence;
  const indicators = deriveIndicators(e);
  const { met, total } = countMet(indicators.values);
  const signal = resolveExitSignal({ toolArgs: input.signalArgs, finalText: input.finalText, toolCalls: e.toolCalls });
  const exit = signal?.exit === true;
  const phase = detectPhase(phaseInputFromEvidence(e, met, exit));
  const errorState = errorDigest(e.checks);
  const hash = stateHash({ phase: phase.phase, indicators: indicators.values, filesChanged: e.filesChanged, errorState });
  const consecutive = consecutiveCount(input.hashHistory, hash);
  const gate = evaluateGate({ indicators: indicators.values, exitSignal: exit, requireExplicitSignal: input.requireExplicitSignal });
  const blockInput = {
    phase: phase.phase,
    iteration: input.iteration,
    maxIterations: input.maxIterations,
    indicators,
    exitSignal: exit,
    stateHash: hash,
    previousHash: input.previousHash,
    stagnationCount: consecutive,
    stagnationThreshold: input.stagnationThreshold,
    nextAction: nextAction(gate, phase),
  };
  return {
    indicators,
    met,
    total,
    signal,
    phase,
    errorState,
    hash,
    consecutive,
    gate,
    status: statusFields(blockInput),
    block: renderStatusBlock(blockInput),
  };
}

/** An IndicatorState from stored values (skip reasons are implied by which indicator is skipped). */
export function indicatorStateFrom(values: IndicatorValues): IndicatorState {
  const skipped: IndicatorState['skipped'] = {};
  if (values.code_committed === 'skipped') skipped.code_committed = SKIP_NOT_GIT;
  if (values.tests_passing === 'skipped') skipped.tests_passing = SKIP_NO_TESTS;
  if (values.ticket_closed === 'skipped') skipped.ticket_closed = SKIP_NO_TICKET;
  return { values: { ...values }, skipped };
}
