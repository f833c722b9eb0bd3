/**
 * The `result` event that ends a turn or loop run on the server's streams: the CLI's own builders
 * (src/agent/result-event.ts, src/loop/result-event.ts), so the fields and status words are the
 * CLI's last event's (SPEC §4).
 */
import { failureOf, failureResult, turnResult as turnResultPayload } from '../agent/result-event.js';
import type { TurnOutcome } from '../agent/agent-types.js';
import type { LoopOutcome } from '../loop/runner.js';
import { loopResult as loopResultPayload } from '../loop/result-event.js';
import type { StreamEvent } from './event-stream.js';

export function turnResult(outcome: TurnOutcome, started: number): StreamEvent {
  return { type: 'result', ...turnResultPayload(outcome, started) };
}

export function loopResult(outcome: LoopOutcome, started: number): StreamEvent {
  return { type: 'result', ...loopResultPayload(outcome, started, outcome.message === null ? [] : [outcome.message]) };
}

/** A failure as the `error` event and the `result` that follow it. */
export function failureEvents(err: unknown, started: number, interrupted: boolean): StreamEvent[] {
  const failure = failureOf(err, interrupted);
  return [{ type: 'error', code: failure.code, message: failure.message }, { type: 'result', ...failureResult(failure, started) }];
}
