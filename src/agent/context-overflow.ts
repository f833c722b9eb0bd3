/**
 * The turn's side of a prompt that does not fit the server's real context (issue 17 point 3).
 * navi sends `truncate: false`, so Ollama refuses such a prompt (HTTP 400, `ContextOverflowError`
 * with the sizes llama-server names) instead of dropping the oldest messages — the task first —
 * in silence (server/prompt.go 35-78). The turn then adopts the server's window as its budget,
 * compresses and asks again, a bounded number of times; and it warns when a server truncates
 * anyway (an Ollama from before `truncate`, or one that ignores it): the prompt count falls
 * while the history only grew. All pure; `turn.ts` and `model-step.ts` call them.
 */
import type { RunningModel } from '../llm/types.js';
import { charsToTokens } from './tokens.js';

/**
 * Compressions after a refusal before the turn gives up: the first one usually fits (it aims at
 * half the window); a second covers an estimate that was still short. More would only summarise
 * summaries.
 */
export const MAX_OVERFLOW_COMPRESSIONS = 2;

/** What a refusal says (either may be missing: the older "prompt is longer" text names neither). */
export interface OverflowSizes {
  promptTokens: number | undefined;
  contextTokens: number | undefined;
}

/**
 * The budget after a refusal: the server's loaded window when it named one below the current
 * budget (clamped to the model's context, or loaded smaller: llm/server.go 111-117), else the
 * current budget. The next estimate is then measured against what the server really holds.
 */
export function budgetAfterOverflow(currentBudget: number, sizes: OverflowSizes): number {
  const window = sizes.contextTokens;
  return window !== undefined && window > 0 && window < currentBudget ? window : currentBudget;
}

/**
 * The estimate's new baseline after a refusal: the refused prompt's real size when the server
 * named it (the request was exactly the context as it stands, plus this call's notes), else the
 * smallest size that cannot fit (the window + 1), else none (keep the estimate).
 */
export function baselineAfterOverflow(sizes: OverflowSizes): number | undefined {
  if (sizes.promptTokens !== undefined && sizes.promptTokens > 0) return sizes.promptTokens;
  if (sizes.contextTokens !== undefined && sizes.contextTokens > 0) return sizes.contextTokens + 1;
  return undefined;
}

/**
 * The context the runner loaded for `model`, from `/api/ps` (server/routes.go PsHandler): what a
 * refusal that names no sizes ("the prompt is longer than the context length…",
 * llm/llama_server.go 295-300) leaves to ask. Names match as Ollama qualifies them (`x` is `x:latest`).
 */
export function loadedContextOf(running: readonly RunningModel[], model: string): number | undefined {
  const qualified = model.includes(':') ? model : `${model}:latest`;
  const entry = running.find((m) => m.name === model || m.name === qualified);
  return entry?.contextLength !== undefined && entry.contextLength > 0 ? entry.contextLength : undefined;
}

/** The `warning` before compressing and asking again. */
export function overflowRetryMessage(model: string, sizes: OverflowSizes, attempt: number): string {
  return `Ollama refused the prompt${tokens(sizes.promptTokens)}: larger than the context${window(sizes.contextTokens)} it loaded for ${model}; compressed the conversation and asking again (${attempt} of ${MAX_OVERFLOW_COMPRESSIONS})`;
}

/**
 * The answer of a turn that could not be made to fit: the sizes, what navi tried, and the fix.
 * `compressions`: how many were made (0: nothing could be compressed).
 */
export function overflowEndMessage(input: { model: string; numCtx: number; sizes: OverflowSizes; compressions: number }): string {
  const { model, numCtx, sizes, compressions } = input;
  const tried = compressions === 0 ? 'nothing in it could be compressed' : `even after ${compressions} compression${compressions === 1 ? '' : 's'}`;
  const clamped = sizes.contextTokens !== undefined && sizes.contextTokens < numCtx ? ` (navi asked for num_ctx ${numCtx})` : '';
  return (
    `The conversation${tokens(sizes.promptTokens)} does not fit the context${window(sizes.contextTokens)} Ollama loaded for ${model}${clamped}; ${tried}. ` +
    'Start a new session with a shorter task, or use a model (or llm.num_ctx) with a larger context.'
  );
}

function tokens(n: number | undefined): string {
  return n !== undefined ? ` (${n} tokens)` : '';
}

function window(n: number | undefined): string {
  return n !== undefined ? ` of ${n} tokens` : '';
}

/** One model call's prompt count against the one before (see `serverTruncatedSilently`). */
export interface PromptCountCheck {
  /** The previous call's `prompt_eval_count`; null when there is none to compare with (first call, compression, profile switch). */
  previous: number | null;
  /** This call's `prompt_eval_count`. */
  current: number;
  /** Characters of the previous request that this one no longer carries: its per-call notes. */
  vanishedChars: number;
}

/**
 * True when the server dropped part of the prompt without saying so: the history only grew since
 * the previous call, yet the prompt counted fewer tokens — more fewer than the previous call's
 * per-call notes (which this request no longer carries) can explain, at chars/3 (an over-count,
 * so a shorter note never looks like truncation). Since v0.30.1 `prompt_eval_count` counts the
 * cached prefix too (llm/llama_server.go 1503-1513, `35fa277fa`); only v0.30.0 counted the
 * uncached suffix alone, and `doctor` warns below 0.30.1.
 */
export function serverTruncatedSilently(check: PromptCountCheck): boolean {
  const { previous, current, vanishedChars } = check;
  if (previous === null || previous <= 0 || current <= 0) return false;
  return current + charsToTokens(vanishedChars) < previous;
}

/** The `warning` (`context_truncated_by_server`) for a silent truncation. */
export function silentTruncationMessage(model: string, previous: number, current: number): string {
  return (
    `the prompt for ${model} counted ${current} tokens, down from ${previous} although the conversation only grew: ` +
    'the server dropped its oldest messages (an Ollama that ignores truncate:false, or a context smaller than num_ctx); ' +
    'upgrade Ollama, or lower llm.num_ctx to the context it loads (navi doctor shows it)'
  );
}
