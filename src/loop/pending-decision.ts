/**
 * An iteration committed before its question was answered (issue 18 item 3): before a person is
 * asked anything (approval, stagnation, the model's question, max iterations), the runner commits
 * the iteration with its decision `pending`, so a Ctrl-C at the menu loses no work. A resumed run
 * whose last iteration is pending asks the same question again instead of redoing the iteration.
 */
import type { NewLoopIteration } from '../store/types.js';
import { isRecord } from '../util/guards.js';
import type { Evaluation } from './evaluate.js';
import type { Ending } from './runner-end.js';

/** The run row's `reason` while (or since) a committed iteration waits for its decision. */
export const AWAITING_DECISION = 'awaiting_decision';

/** An iteration's row without its decision. */
export type IterationRow = Omit<NewLoopIteration, 'decision'>;

/** Stopped while a person was asked about a committed iteration: a resume asks again. */
export function awaitingDecision(n: number): Ending {
  return { status: 'interrupted', reason: AWAITING_DECISION, message: `interrupted while asking about iteration ${n}; the iteration is saved and a resume asks again`, marker: null };
}

/** What the decisions of a committed iteration need, stored as its `decision.pending`. */
export interface PendingDecision {
  evaluation: Evaluation;
  final_text: string;
  last_action: string;
  /** The run's previous recorded hash before this iteration (restored if its hash is not recorded). */
  previous_hash: string | null;
}

/** The iteration's stored decision while it is pending. */
export function pendingRecord(p: PendingDecision): Record<string, unknown> {
  return { pending: p };
}

/** The pending decision in a stored iteration's `decision`, or null when it was settled. */
export function pendingOf(decision: unknown): PendingDecision | null {
  if (!isRecord(decision) || !isRecord(decision.pending)) return null;
  const p = decision.pending;
  const ev = p.evaluation;
  if (!isRecord(ev) || typeof ev.hash !== 'string' || !isRecord(ev.gate) || !isRecord(ev.indicators) || !isRecord(ev.phase)) return null;
  return {
    evaluation: ev as unknown as Evaluation,
    final_text: typeof p.final_text === 'string' ? p.final_text : '',
    last_action: typeof p.last_action === 'string' ? p.last_action : '',
    previous_hash: typeof p.previous_hash === 'string' ? p.previous_hash : null,
  };
}
