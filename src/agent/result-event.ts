/**
 * The `result` event that ends a turn (SPEC §4), one builder for every front end: `navi run`
 * prints it, `navi serve` streams it. Also the shape of a failure's `error` + `result`.
 */
import { describeError, EXIT, isNaviError, type ExitStatus } from '../errors.js';
import type { TurnOutcome } from './agent-types.js';
import type { EventPayload, StopReason } from './events.js';

export type ResultPayload = EventPayload<'result'>;

/** How a turn's stop reason reads as a result status. */
export const TURN_EXIT_STATUS: Readonly<Record<StopReason, ExitStatus>> = {
  completed: 'success',
  max_iterations: 'incomplete',
  interrupted: 'interrupted',
  context_too_large: 'error',
  // The answer is there but cut off: not a clean success (SPEC §13), and not a crash.
  truncated: 'incomplete',
  model_error: 'error',
};

/** A turn's result; `over` replaces the status, reason or errors its outcome implies. */
export function turnResult(outcome: TurnOutcome, started: number, over: Partial<Pick<ResultPayload, 'status' | 'reason' | 'errors' | 'structured'>> = {}): ResultPayload {
  const status = over.status ?? TURN_EXIT_STATUS[outcome.stopReason];
  return {
    status,
    reason: over.reason ?? outcome.stopReason,
    exit_code: EXIT[status],
    result: outcome.text,
    num_turns: outcome.modelCalls,
    iterations: outcome.iterations,
    usage: { prompt_tokens: outcome.usage.promptTokens, completion_tokens: outcome.usage.completionTokens },
    duration_ms: Date.now() - started,
    errors: over.errors ?? (outcome.error !== undefined ? [outcome.error] : []),
    ...(over.structured !== undefined ? { structured: over.structured } : {}),
  };
}

/** What a failure says: a navi error its own words, a stop "interrupted", anything else unexpected. */
export function failureOf(err: unknown, interrupted: boolean): { status: ExitStatus; code: string; message: string } {
  const stopped = interrupted && !isNaviError(err);
  return {
    status: stopped ? 'interrupted' : isNaviError(err) ? err.status : 'error',
    code: stopped ? 'interrupted' : isNaviError(err) ? err.code : 'unexpected_error',
    message: isNaviError(err) ? err.message : stopped ? 'interrupted' : `unexpected error: ${describeError(err)}`,
  };
}

/** The result of a run that failed before it had an outcome. */
export function failureResult(failure: { status: ExitStatus; code: string; message: string }, started: number): ResultPayload {
  return {
    status: failure.status,
    reason: failure.code,
    exit_code: EXIT[failure.status],
    result: '',
    num_turns: 0,
    usage: { prompt_tokens: 0, completion_tokens: 0 },
    duration_ms: Date.now() - started,
    errors: [failure.message],
  };
}
