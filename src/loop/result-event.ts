/** The `result` event that ends a loop run (SPEC §4), for `navi loop` and `navi serve` alike. */
import type { ResultPayload } from '../agent/result-event.js';
import { EXIT } from '../errors.js';
import { LOOP_EXIT_STATUS, type LoopOutcome } from './runner-types.js';

export function loopResult(outcome: LoopOutcome, started: number, errors: string[]): ResultPayload {
  const status = LOOP_EXIT_STATUS[outcome.status];
  return {
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
    errors,
  };
}
