/**
 * One compression: select → summarise with the model (retrying) → or hard-truncate → fit.
 * The model is a parameter; nothing here touches the store. The caller (pre-, mid- and
 * post-turn paths, and `navi sessions compact`) saves `context` and archives `replaced` in one
 * transaction, and emits the events.
 */
import { describeError, isAbortError } from '../../errors.js';
import { helperThink } from '../../llm/helper-think.js';
import type { ChatMessage, LlmClient } from '../../llm/types.js';
import { CHARS_PER_TOKEN } from '../tokens.js';
import { NothingToCompactError } from './errors.js';
import { renderCompressionPrompt } from './prompt.js';
import { mechanicalSummary, renderTranscript } from './render.js';
import { fitToBudget } from './safety-net.js';
import { selectForCompression } from './select.js';
import { compressedCount } from './summary-message.js';
import { contextTokens, MIN_BUDGET_TOKENS, summaryTokenCap } from './thresholds.js';
import { headTail } from './shrink.js';

/** Retries after a failed or empty summary before falling back to hard truncation. */
const DEFAULT_RETRIES = 2;

/** Tokens kept free in the summariser's window for message framing and template tokens. */
const SUMMARISER_MARGIN_TOKENS = 64;

/** What compressContext needs; narrow on purpose (no config, no store). */
export interface CompressionInput {
  llm: LlmClient;
  model: string;
  /** Sent with the summariser call, and the window its request must fit. */
  numCtx: number;
  /** The run's `keep_alive`, sent with the summariser call. */
  keepAlive?: string | number;
  /** The window the request must fit when smaller than num_ctx (the server's real context, after an overflow refusal). */
  windowTokens?: number;
  /** Aborts the summariser call; an abort always propagates. */
  signal: AbortSignal;
  /** The stored context (system messages already stripped). Never mutated. */
  context: readonly ChatMessage[];
  /** Messages kept verbatim (may shrink, see select.ts). */
  keepRecent: number;
  /** Lower bound when keep_recent shrinks (default MIN_KEEP_RECENT). */
  minKeepRecent?: number;
  /** The profile's cap on the summary, in tokens (further capped at half the budget). */
  maxSummaryTokens: number;
  /** The summariser prompt (file contents); `{{max_tokens}}` is filled in. */
  promptText: string;
  /** Tokens the new context may take (see compressionBudget: ~50% of num_ctx minus request overhead). */
  budgetTokens: number;
  /** Extra attempts after a failed or empty summary (default 2). */
  retries?: number;
  /** The message that started the turn (the user's task): never summarised, kept verbatim (select.ts). */
  pinned?: ChatMessage;
}

/** The outcome of one compression. */
export interface CompressionResult {
  /** The new context: [summary, acknowledgement?, ...recent] within the budget. */
  context: ChatMessage[];
  /** Every message of the old context that is not in the new one verbatim (for the archive), in order. */
  replaced: ChatMessage[];
  /** The summary as written (the model's, cut to the cap, or the mechanical digest), without the header. */
  summary: string;
  /** `summary`: the model wrote it; `hard_truncation`: every attempt failed, older messages were dropped. */
  method: 'summary' | 'hard_truncation';
  /** True when the safety net had to cut or drop kept messages to fit the budget. */
  safetyNet: boolean;
  /** Summariser calls made. */
  attempts: number;
  /** Why the last attempt failed, when one did. */
  lastError?: string;
  /** Estimated tokens (chars/3) of the context given. */
  tokensBefore: number;
  /** Estimated tokens (chars/3) of `context`; never above the budget (nor MIN_BUDGET_TOKENS when that is larger). */
  tokensAfter: number;
}

/** The model's text, trimmed and cut at a line break near `maxChars`; null when empty. */
function validSummary(text: string, maxChars: number): string | null {
  const trimmed = text.trim();
  if (trimmed.length === 0) return null;
  if (trimmed.length <= maxChars) return trimmed;
  const cut = trimmed.slice(0, Math.max(0, maxChars - 1));
  const nl = cut.lastIndexOf('\n');
  return `${(nl > maxChars / 2 ? cut.slice(0, nl) : cut).trimEnd()}…`;
}

/**
 * Compresses `context` into [summary, ...recent] within `budgetTokens`. Throws
 * NothingToCompactError when there is nothing older than the kept messages, and rethrows an
 * abort; any other summariser failure is retried, then replaced by a mechanical digest.
 */
export async function compressContext(input: CompressionInput): Promise<CompressionResult> {
  const { llm, signal, context } = input;
  signal.throwIfAborted();
  const budget = Math.max(MIN_BUDGET_TOKENS, Math.floor(input.budgetTokens));
  const cap = summaryTokenCap(input.maxSummaryTokens, budget);
  const selection = selectForCompression(context, input.keepRecent, {
    minKeepRecent: input.minKeepRecent,
    maxRecentTokens: budget - cap,
    ...(input.pinned !== undefined ? { pinned: input.pinned } : {}),
  });
  if (selection === null) {
    throw new NothingToCompactError(
      `nothing to compact: the context holds ${context.length} message(s), all among the most recent ones kept verbatim (keep_recent ${input.keepRecent})`,
    );
  }
  const { older, recent } = selection;
  const maxSummaryChars = cap * CHARS_PER_TOKEN;

  const system = renderCompressionPrompt(input.promptText, cap);
  // The summariser's request must fit too: its prompt, the transcript and room for the answer.
  const promptTokens = contextTokens([{ role: 'system', content: system }]);
  const transcriptChars = (Math.min(input.numCtx, input.windowTokens ?? input.numCtx) - promptTokens - cap - SUMMARISER_MARGIN_TOKENS) * CHARS_PER_TOKEN;
  const transcript = `Summarise this conversation (${older.length} messages):\n\n${renderTranscript(older, transcriptChars - 64)}`;

  let summary: string | null = null;
  let attempts = 0;
  let lastError: string | undefined;
  const retries = Math.max(0, input.retries ?? DEFAULT_RETRIES);
  while (summary === null && attempts <= retries) {
    signal.throwIfAborted();
    attempts++;
    try {
      const res = await llm.chat({
        model: input.model,
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: transcript },
        ],
        // Non-streaming helper calls never ask for reasoning: it would eat the window and leak into
        // the text. gpt-oss cannot turn it off and ignores false: "low" there (helper-think.ts).
        think: await helperThink(llm, input.model, signal),
        numCtx: input.numCtx,
        // Without it, a summariser call that loads the model loads it for the server's default 5m (sched.go 512-515).
        ...(input.keepAlive !== undefined && { keepAlive: input.keepAlive }),
        signal,
      });
      summary = validSummary(res.content, maxSummaryChars);
      if (summary === null) lastError = 'the model returned an empty summary';
    } catch (err) {
      if (isAbortError(err)) throw err;
      // An adapter may wrap the abort; the signal is the truth.
      signal.throwIfAborted();
      lastError = describeError(err);
    }
  }

  const method: CompressionResult['method'] = summary !== null ? 'summary' : 'hard_truncation';
  const text = summary ?? mechanicalSummary(older, maxSummaryChars);
  const fitted = fitToBudget(headTail(text, maxSummaryChars), compressedCount(older), recent, budget, selection.pinned);
  const kept = new Set(fitted.context);
  const result: CompressionResult = {
    context: fitted.context,
    replaced: context.filter((m) => !kept.has(m)),
    summary: text,
    method,
    safetyNet: fitted.safetyNet,
    attempts,
    tokensBefore: contextTokens(context),
    tokensAfter: contextTokens(fitted.context),
  };
  if (lastError !== undefined) result.lastError = lastError;
  return result;
}
