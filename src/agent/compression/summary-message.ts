/**
 * How a summary sits in the context. Convention (the one tool-calling chat templates handle
 * best):
 * - The summary is a `user` message starting with a fixed header line,
 *   `[Summary of the earlier conversation — N messages compressed]`. It cannot be `system`:
 *   system messages are stripped from the stored context and the system prompt must stay
 *   byte-identical. As the first message it also gives the context the user-first opening
 *   every template expects.
 * - When the kept messages start with a `user` message, a fixed assistant acknowledgement
 *   follows the summary, so roles still alternate at the seam (some templates reject or garble
 *   two user turns in a row, and a model reads a second user turn as the real request, skipping
 *   the summary). When they start with an assistant message (a reply, or a tool call with its
 *   results) nothing is inserted: user → assistant already alternates, and an extra assistant
 *   turn would create the assistant → assistant pair we are avoiding.
 * - The kept messages never start with a `tool` result (select.ts keeps groups whole), so no
 *   result is ever orphaned from its call.
 */
import type { ChatMessage } from '../../llm/types.js';

const HEADER_PREFIX = '[Summary of the earlier conversation';

/** The fixed acknowledgement inserted after the summary when the kept messages open with a user turn. */
export const SUMMARY_ACK = 'Understood. I have the summary of the earlier conversation and will continue from it.';

/** The header line; N counts every message compressed so far, across repeated compressions. */
export function summaryHeader(compressedMessages: number): string {
  return `${HEADER_PREFIX} — ${compressedMessages} messages compressed]`;
}

/** True for a summary message this module wrote. */
export function isSummaryMessage(m: ChatMessage): boolean {
  return m.role === 'user' && m.content.startsWith(HEADER_PREFIX);
}

/** True for the acknowledgement that may follow a summary. */
export function isSummaryAck(m: ChatMessage): boolean {
  return m.role === 'assistant' && m.content === SUMMARY_ACK && (m.tool_calls?.length ?? 0) === 0;
}

/** N from a summary's header (0 when unreadable). */
export function summaryCount(m: ChatMessage): number {
  const match = /^\[Summary of the earlier conversation — (\d+) messages compressed\]/.exec(m.content);
  return match ? Number(match[1]) : 0;
}

/** The summary text below the header. */
export function summaryBody(m: ChatMessage): string {
  const nl = m.content.indexOf('\n');
  return nl < 0 ? '' : m.content.slice(nl + 1).trim();
}

/**
 * How many original messages `older` stands for: earlier summaries count with their own N,
 * acknowledgements not at all.
 */
export function compressedCount(older: readonly ChatMessage[]): number {
  let n = 0;
  for (const m of older) {
    if (isSummaryMessage(m)) n += summaryCount(m);
    else if (!isSummaryAck(m)) n++;
  }
  return n;
}

/** The summary message, plus the acknowledgement when `next` (the first kept message) is a user turn. */
export function summaryMessages(summary: string, compressedMessages: number, next: ChatMessage | undefined): ChatMessage[] {
  const out: ChatMessage[] = [{ role: 'user', content: `${summaryHeader(compressedMessages)}\n${summary}` }];
  if (next?.role === 'user') out.push({ role: 'assistant', content: SUMMARY_ACK });
  return out;
}
