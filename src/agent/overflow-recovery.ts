/**
 * A model call that survives the server's context refusal (issue 17 point 3): on a
 * `ContextOverflowError` the turn adopts the window the server named, compresses and asks again,
 * (or, when the refusal names none, the one `/api/ps` reports), at most MAX_OVERFLOW_COMPRESSIONS times; when nothing can be compressed, or it still does not
 * fit, the turn ends `context_too_large` with the sizes and the fix (context-overflow.ts).
 */
import { ContextOverflowError } from '../llm/ollama-errors.js';
import {
  baselineAfterOverflow,
  budgetAfterOverflow,
  loadedContextOf,
  MAX_OVERFLOW_COMPRESSIONS,
  overflowEndMessage,
  overflowRetryMessage,
  type OverflowSizes,
} from './context-overflow.js';
import type { AgentEvent } from './events.js';
import type { ModelCallOutcome } from './model-call.js';
import type { TurnState } from './turn-state.js';

export type FittingOutcome = { kind: 'asked'; outcome: ModelCallOutcome } | { kind: 'too_large'; message: string };

export interface OverflowSteps {
  /** The model step's call (with its own retries after the model's mistakes). */
  ask(): AsyncGenerator<AgentEvent, ModelCallOutcome>;
  /** A compression now, if one is due by the (new) budget: true when the context changed. */
  compress(): AsyncGenerator<AgentEvent, boolean>;
}

/** The context the server loaded for the turn's model (`/api/ps`), when the refusal did not say; undefined when it cannot tell. */
async function serverContext(state: TurnState): Promise<number | undefined> {
  const running = await state.deps.llm.runningModels?.(state.signal).catch(() => undefined);
  return running === undefined ? undefined : loadedContextOf(running, state.model);
}

export async function* askWithinContext(state: TurnState, steps: OverflowSteps): AsyncGenerator<AgentEvent, FittingOutcome> {
  for (let compressions = 0; ; compressions++) {
    let sizes: OverflowSizes;
    try {
      return { kind: 'asked', outcome: yield* steps.ask() };
    } catch (err) {
      if (!(err instanceof ContextOverflowError)) throw err;
      sizes = { promptTokens: err.promptTokens, contextTokens: err.contextTokens ?? (await serverContext(state)) };
    }
    state.adoptServerContext(budgetAfterOverflow(state.contextBudget, sizes), baselineAfterOverflow(sizes));
    const ending = { kind: 'too_large' as const, message: overflowEndMessage({ model: state.model, numCtx: state.numCtx, sizes, compressions }) };
    if (compressions >= MAX_OVERFLOW_COMPRESSIONS || state.signal.aborted) return ending;
    if (!(yield* steps.compress())) return ending;
    yield { type: 'warning', code: 'context_overflow', message: overflowRetryMessage(state.model, sizes, compressions + 1), iteration: state.iteration };
  }
}
