/**
 * The `result` event that ends a turn or loop run on the server's streams: the same fields and
 * status words as the CLI's last event (SPEC §4), built from the agent's or runner's outcome.
 */
import type { StopReason } from '../agent/events.js';
import type { TurnOutcome } from '../agent/agent-types.js';
import { describeError, EXIT, isNaviError, type ExitStatus } from '../errors.js';
import type { LoopOutcome } from '../loop/runner.js';
import type { StreamEvent } from './event-stream.js';

/** How a turn's stop reason reads as a result status (as `navi run`). */
export const TURN_STATUS: Record<StopReason, ExitStatus> = {
  completed: 'success',
  max_iterations: 'incomplete',
  interrupted: 'interrupted',
  context_too_large: 'error',
  truncated: 'incomplete',
  model_error: 'error',
};

/** How a loop's ending reads as a result status (as `navi loop`). */
export const LOOP_STATUS: Record<LoopOutcome['status'], ExitStatus> = {
  completed: 'success',
  incomplete: 'incomplete',
  aborted: 'aborted',
  budget_exhausted: 'budget_exhausted',
  interrupted: 'interrupted',
  failed: 'error',
};

export function turnResult(outcome: TurnOutcome, started: number): StreamEvent {
  const status = TURN_STATUS[outcome.stopReason];
  return {
    type: 'result',
    status,
    reason: outcome.stopReason,
    exit_code: EXIT[status],
    result: outcome.text,
    iterations: outcome.iterations,
    num_turns: outcome.modelCalls,
    usage: { prompt_tokens: outcome.usage.promptTokens, completion_tokens: outcome.usage.completionTokens },
    duration_ms: Date.now() - started,
    errors: outcome.error !== undefined ? [outcome.error] : [],
  };
}

export function loopResult(outcome: LoopOutcome, started: number): StreamEvent {
  const status = LOOP_STATUS[outcome.status];
  return {
    type: 'result',
    status,
    reason: outcome.reason,
    exit_code: EXIT[status],
    result: outcome.finalText,
    run_id: outcome.runId,
    iterations: outcome.iterations,
    num_turns: outcome.modelCalls,
    usage: { prompt_tokens: outcome.usage.promptTokens, completion_tokens: outcome.usage.completionTokens },
    duration_ms: Date.now() - started,
    ...(outcome.indicators !== null ? { indicators: outcome.indicators } : {}),
    ...(outcome.stateHash !== null ? { state_hash: outcome.stateHash } : {}),
    errors: outcome.message === null ? [] : [outcome.message],
  };
}

/** A failure as the `error` event and the `result` that follow it. */
export function failureEvents(err: unknown, started: number, interrupted: boolean): StreamEvent[] {
  const stopped = interrupted && !isNaviError(err);
  const status: ExitStatus = stopped ? 'interrupted' : isNaviError(err) ? err.status : 'error';
  const code = stopped ? 'interrupted' : isNaviError(err) ? err.code : 'unexpected_error';
  const message = isNaviError(err) ? err.message : stopped ? 'interrupted' : `unexpected error: ${describeError(err)}`;
  return [
    { type: 'error', code, message },
    {
      type: 'result',
      status,
      reason: code,
      exit_code: EXIT[status],
      result: '',
      num_turns: 0,
      usage: { prompt_tokens: 0, completion_tokens: 0 },
      duration_ms: Date.now() - started,
      errors: [message],
    },
  ];
}
