/**
 * Which messages a compression summarises (`older`) and which it keeps verbatim (`recent`).
 *
 * Rules:
 * - `recent` is the last `keepRecent` messages, with the boundary moved earlier until `recent`
 *   starts at a user message or a whole group: an assistant message with tool_calls is never
 *   separated from the tool results that follow it (a result without its call is rejected or
 *   misread by tool-calling models).
 * - A summary at the start of the context belongs to `older`: it is re-summarised together
 *   with what came after it, so there is only ever one summary.
 * - `older` must hold something besides an earlier summary and its acknowledgement;
 *   re-summarising a summary alone gains nothing. And it must hold two messages at least: a
 *   summary of one message saves nothing (a compression that cannot save anything is not made).
 * - The message that started the turn (`pinned`: the user's task) is never summarised: when it
 *   falls among the older messages it is taken out of `older` and kept verbatim after the
 *   summary (small models with 8k windows otherwise lose the task at the first compression).
 * - Shrinking: select is asked when the context must get smaller (over 80%, or forced), so
 *   when `keepRecent` leaves nothing to summarise, or what it keeps alone exceeds
 *   `maxRecentTokens`, keep_recent is lowered step by step down to `minKeepRecent`
 *   (default MIN_KEEP_RECENT = 2: the latest exchange stays verbatim). A group larger than
 *   that is kept whole anyway; the safety net in compressContext cuts it down.
 * `null` means there is nothing to summarise at any allowed keep_recent (the would-compress
 * check; forced compression reports it as NothingToCompactError).
 */
import type { ChatMessage } from '../../llm/types.js';
import { isSummaryAck, isSummaryMessage } from './summary-message.js';
import { contextTokens, MIN_KEEP_RECENT } from './thresholds.js';

/** The two parts of a context; `older` + `recent` is the context, in order. */
export interface CompressionSelection {
  older: ChatMessage[];
  recent: ChatMessage[];
  /** The pinned message, when it fell before the boundary (kept verbatim after the summary). */
  pinned?: ChatMessage;
}

/** Optional limits on the selection. */
export interface SelectOptions {
  /** Smallest keep_recent allowed when shrinking (default min(keepRecent, MIN_KEEP_RECENT)). */
  minKeepRecent?: number;
  /** Keep shrinking while the kept messages exceed this many estimated tokens (default: no limit). */
  maxRecentTokens?: number;
  /** The message that started the turn (the user's task): never summarised (same object as in the context). */
  pinned?: ChatMessage;
}

/** The first index of `recent` for `keep` kept messages, moved back so no tool group is split. */
function boundaryFor(context: readonly ChatMessage[], keep: number): number {
  let b = Math.max(0, context.length - keep);
  while (b > 0 && context[b]?.role === 'tool') b--;
  return b;
}

/** True when summarising `older` gains something: two messages at least, not only an earlier summary. */
function worthSummarising(older: readonly ChatMessage[]): boolean {
  return older.length >= 2 && older.some((m) => !isSummaryMessage(m) && !isSummaryAck(m));
}

/**
 * Splits `context` into the messages to summarise and the ones to keep (see the rules above);
 * `null` when there is nothing to summarise.
 */
export function selectForCompression(context: readonly ChatMessage[], keepRecent: number, options: SelectOptions = {}): CompressionSelection | null {
  const keep = Math.max(0, Math.floor(keepRecent));
  const minKeep = Math.max(0, Math.min(keep, Math.floor(options.minKeepRecent ?? MIN_KEEP_RECENT)));
  const maxRecent = options.maxRecentTokens ?? Number.POSITIVE_INFINITY;
  const { pinned } = options;
  const olderThan = (b: number): ChatMessage[] => {
    const older = context.slice(0, b);
    return pinned === undefined ? older : older.filter((m) => m !== pinned);
  };
  let chosen = -1;
  let lastBoundary = -1;
  for (let k = keep; k >= minKeep; k--) {
    const b = boundaryFor(context, k);
    if (b === lastBoundary) continue;
    lastBoundary = b;
    if (!worthSummarising(olderThan(b))) continue;
    chosen = b;
    if (contextTokens(context.slice(b)) <= maxRecent) break;
  }
  if (chosen < 0) return null;
  const older = olderThan(chosen);
  const selection: CompressionSelection = { older, recent: context.slice(chosen) };
  if (older.length < chosen && pinned !== undefined) selection.pinned = pinned;
  return selection;
}

/** The would-compress guard: true when `selectForCompression` finds something to summarise. */
export function wouldCompress(context: readonly ChatMessage[], keepRecent: number, options: SelectOptions = {}): boolean {
  return selectForCompression(context, keepRecent, options) !== null;
}
