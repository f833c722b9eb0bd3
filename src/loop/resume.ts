/**
 * `navi loop --resume RUN [--extend N] [--max-tokens N] [--deadline D]` (SPEC §7): which runs may
 * continue and with what limits. A completed or aborted run is over; a `running` run is taken
 * over only when its owner is gone (ownership.ts); a run that stopped on a limit needs that limit
 * raised (`--extend`, `--max-tokens`, a new `--deadline`), or it would stop again at once.
 * The deadline stays the run's original one unless a new one is given.
 */
import { InvalidInputError } from '../errors.js';
import type { LoopRunRecord } from '../store/types.js';
import { ownerOf, takeoverVerdict } from './ownership.js';
import { AWAITING_DECISION } from './pending-decision.js';
import { RESUMABLE } from './runner-types.js';

/** What the user asked for and what the check needs to know. */
export interface ResumeRequest {
  /** `--extend N` (0 when not given). */
  extend: number;
  /** `--clarify TEXT`: needed to continue a run that ended aborted. */
  clarify?: string;
  /** `--max-tokens N`: a new budget for the whole run. */
  maxTokens?: number;
  /** `--deadline D`: a new deadline, D from now. */
  deadlineMs?: number;
  now: number;
  me: { pid: number; host: string };
  isAlive: (pid: number) => boolean;
}

/** The limits the resumed run runs under. */
export interface ResumePlan {
  maxIterations: number;
  maxTokens: number | null;
  deadlineAt: Date | null;
  /** How the run was taken over (stale owner), shown as a warning; null when nothing to say. */
  note: string | null;
}

/** Checks that `run` can be resumed; throws InvalidInputError (exit 2) saying why not and what to do. */
export function planResume(run: LoopRunRecord, req: ResumeRequest): ResumePlan {
  const id = run.id;
  const clarified = req.clarify !== undefined && req.clarify.trim() !== '';
  if (req.clarify !== undefined && !clarified) throw new InvalidInputError('flag_invalid', '--clarify needs the clarification text, e.g. --clarify "the config lives in etc/"');
  // An aborted run (stagnation, or a person's Abort) goes on once someone says what was missing.
  if (run.status === 'aborted' && !clarified) {
    throw new InvalidInputError(
      'run_not_resumable',
      `loop run ${id} ended aborted${run.reason ? ` (${run.reason})` : ''}; to continue it, say what the model missed: navi loop --resume ${id} --clarify "TEXT"`,
    );
  }
  if (!RESUMABLE.has(run.status) && run.status !== 'aborted') {
    throw new InvalidInputError(
      'run_not_resumable',
      `loop run ${id} ended ${run.status}${run.reason ? ` (${run.reason})` : ''} and cannot be resumed; start a new run with: navi loop <task>`,
    );
  }
  let note: string | null = null;
  if (run.status === 'running') {
    const verdict = takeoverVerdict({ owner: ownerOf(run.config), updatedAt: run.updatedAt, me: req.me, now: req.now, isAlive: req.isAlive });
    if (!verdict.ok) throw new InvalidInputError('run_busy', `loop run ${id} is still running: ${verdict.reason}`);
    note = `loop run ${id} was left running: ${verdict.note}`;
  }
  if (!Number.isInteger(req.extend) || req.extend < 0) {
    throw new InvalidInputError('flag_invalid', `--extend must be a whole number of iterations (got ${String(req.extend)})`);
  }
  const maxIterations = run.maxIterations + req.extend;
  // A run stopped at its max-iterations menu resumes to be asked again (pending-decision.ts).
  if (run.iteration >= maxIterations && run.reason !== AWAITING_DECISION) {
    throw new InvalidInputError(
      'run_at_max_iterations',
      `loop run ${id} has used all ${run.maxIterations} of its iterations; resume with more: navi loop --resume ${id} --extend 3`,
    );
  }
  const maxTokens = req.maxTokens ?? run.maxTokens;
  const spent = run.promptTokens + run.completionTokens;
  if (maxTokens !== null && spent >= maxTokens) {
    throw new InvalidInputError(
      'budget_exhausted',
      `loop run ${id} has spent ${spent} of its ${maxTokens} tokens; resume with a larger budget: --max-tokens ${Math.max(maxTokens * 2, spent + 1)}`,
    );
  }
  const deadlineAt = req.deadlineMs !== undefined ? new Date(req.now + req.deadlineMs) : run.deadlineAt;
  if (deadlineAt !== null && deadlineAt.getTime() <= req.now) {
    throw new InvalidInputError(
      'budget_exhausted',
      `loop run ${id} passed its deadline (${deadlineAt.toISOString()}); resume with a new one, e.g. --deadline 1h`,
    );
  }
  return { maxIterations, maxTokens, deadlineAt, note };
}
