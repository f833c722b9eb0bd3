/**
 * Per-message view truncation (seed 000, SPEC §8): in the request only, any single tool or
 * assistant message larger than the budget is replaced by a head+tail copy carrying
 * `[…truncated ~N tokens…]`, so one huge tool result cannot blow the window on its own.
 * Stored history is never touched; full compression handles the cumulative case.
 *
 * This runs before every model call over the whole context, so it must cost next to nothing:
 * one pass, and each message's verdict memoised on the message object itself. Returning the
 * very same copy for the same message every time also keeps the request prefix byte-stable
 * (Ollama reuses its KV cache only for an unchanged prefix).
 */
import type { ChatMessage } from '../../llm/types.js';
import { CHARS_PER_TOKEN, charsToTokens, messageChars } from '../tokens.js';
import { shrinkMessage } from './shrink.js';

/** Share of num_ctx one message may take when `CONTEXT_MESSAGE_TOKEN_BUDGET` is unset (seed 000: num_ctx // 6). */
const AUTO_BUDGET_DIVISOR = 6;

/** The per-message budget: the configured one when positive, else floor(numCtx / 6). */
export function viewBudget(numCtx: number, configured: number): number {
  return configured > 0 ? configured : Math.floor(numCtx / AUTO_BUDGET_DIVISOR);
}

interface ViewMemo {
  budget: number;
  /**
   * Content length when the verdict was taken: messages are treated as immutable once stored,
   * and this cheap check catches a caller that appends to one anyway.
   */
  contentLength: number;
  view: ChatMessage;
}

const memo = new WeakMap<ChatMessage, ViewMemo>();

function viewOf(m: ChatMessage, budgetTokens: number): ChatMessage {
  if (m.role !== 'tool' && m.role !== 'assistant') return m;
  const hit = memo.get(m);
  if (hit !== undefined && hit.budget === budgetTokens && hit.contentLength === m.content.length) return hit.view;
  const view = charsToTokens(messageChars(m)) > budgetTokens ? shrinkMessage(m, budgetTokens * CHARS_PER_TOKEN) : m;
  memo.set(m, { budget: budgetTokens, contentLength: m.content.length, view });
  return view;
}

/**
 * A new array with every tool/assistant message over `budgetTokens` (estimated) replaced by
 * a head+tail copy (`[…truncated ~N tokens…]`, N = tokens removed). Unchanged messages are the
 * same objects; `messages` and its elements are never mutated. A budget ≤ 0 disables it.
 */
export function truncateForView(messages: readonly ChatMessage[], budgetTokens: number): ChatMessage[] {
  if (budgetTokens <= 0) return messages.slice();
  const out = new Array<ChatMessage>(messages.length);
  for (let i = 0; i < messages.length; i++) out[i] = viewOf(messages[i] as ChatMessage, budgetTokens);
  return out;
}
