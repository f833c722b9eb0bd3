/**
 * Head+tail cutting of single messages, shared by the per-request view truncation and the
 * compression safety net. The middle of a long tool result or reply is what a model can best
 * do without: the head says what it is, the tail holds the outcome (exit status, last error).
 */
import type { ChatMessage, ToolCallRequest } from '../../llm/types.js';
import { isRecord } from '../../util/guards.js';
import { charsToTokens, messageChars } from '../tokens.js';

/** The exact marker users and scripts look for in requests: `[…truncated ~N tokens…]`. */
export function truncationMarker(tokensRemoved: number): string {
  return `[…truncated ~${tokensRemoved} tokens…]`;
}

/** Below this a piece is not cut further: a marker with no text around it tells the model nothing. */
const MIN_PIECE_CHARS = 64;

/**
 * `text` cut to at most `maxChars` characters (marker included, as long as `maxChars` leaves
 * room for it): half head, half tail, the marker between them on its own line. N in the
 * marker is the estimated number of tokens removed. Never splits a surrogate pair.
 */
export function headTail(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  // Sized for the largest N possible, so the result never overshoots once N is known.
  const room = truncationMarker(charsToTokens(text.length)).length + 2;
  const keep = Math.max(0, maxChars - room);
  let head = text.slice(0, Math.ceil(keep / 2));
  const tailLen = keep - Math.ceil(keep / 2);
  let tail = tailLen > 0 ? text.slice(text.length - tailLen) : '';
  if (/[\uD800-\uDBFF]$/.test(head)) head = head.slice(0, -1);
  if (/^[\uDC00-\uDFFF]/.test(tail)) tail = tail.slice(1);
  const removed = text.length - head.length - tail.length;
  return `${head}\n${truncationMarker(charsToTokens(removed))}\n${tail}`;
}

/**
 * A copy of `m` whose `messageChars` is at most `maxChars` where possible: its reasoning is cut
 * first, then the content, then the longest string arguments of its tool calls (a `write_file` with a whole file
 * in it is the usual culprit). Returns `m` itself when it already fits; never mutates `m`.
 */
export function shrinkMessage(m: ChatMessage, maxChars: number): ChatMessage {
  const total = messageChars(m);
  if (total <= maxChars) return m;
  let excess = total - maxChars;
  // Reasoning goes first: the answer and the calls are what the rest of the turn builds on.
  if (m.thinking !== undefined && m.thinking.length > MIN_PIECE_CHARS) {
    const thinking = headTail(m.thinking, Math.max(MIN_PIECE_CHARS, m.thinking.length - excess));
    excess -= m.thinking.length - thinking.length;
    m = { ...m, thinking };
    if (excess <= 0) return m;
  }
  let content = m.content;
  if (content.length > MIN_PIECE_CHARS) {
    const cut = headTail(content, Math.max(MIN_PIECE_CHARS, content.length - excess));
    excess -= content.length - cut.length;
    content = cut;
  }
  if (excess <= 0 || !m.tool_calls || m.tool_calls.length === 0) return { ...m, content };
  return { ...m, content, tool_calls: shrinkCalls(m.tool_calls, excess) };
}

interface Slot {
  value: string;
  /** Chars the value contributes to `messageChars` (JSON-escaped inside an arguments object). */
  size(v: string): number;
  set(v: string): void;
}

const rawSize = (v: string): number => v.length;
const jsonSize = (v: string): number => JSON.stringify(v).length;

/** Cuts `value` so its size drops by `excess` where possible, always from the uncut text (one marker, never nested). */
function cutSlot(slot: Slot, excess: number): number {
  const original = slot.value;
  const before = slot.size(original);
  let target = Math.max(MIN_PIECE_CHARS, original.length - excess);
  let cut = headTail(original, target);
  // Escapes (newlines, quotes) make the JSON size differ from the length; correct a few times.
  for (let i = 0; i < 4; i++) {
    const saved = before - slot.size(cut);
    if (saved >= excess || target <= MIN_PIECE_CHARS) break;
    target = Math.max(MIN_PIECE_CHARS, target - (excess - saved));
    cut = headTail(original, target);
  }
  slot.set(cut);
  return before - slot.size(cut);
}

/** Copies of `calls` with their longest string arguments cut until `excess` chars are gone. */
function shrinkCalls(calls: readonly ToolCallRequest[], excess: number): ToolCallRequest[] {
  const slots: Slot[] = [];
  const copies = calls.map((c) => {
    const copy: ToolCallRequest = { ...c };
    const args = c.arguments;
    if (typeof args === 'string') {
      slots.push({ value: args, size: rawSize, set: (v) => (copy.arguments = v) });
    } else if (isRecord(args)) {
      const argsCopy: Record<string, unknown> = { ...args };
      copy.arguments = argsCopy;
      for (const [k, v] of Object.entries(argsCopy)) {
        if (typeof v === 'string') slots.push({ value: v, size: jsonSize, set: (s) => (argsCopy[k] = s) });
      }
    }
    return copy;
  });
  slots.sort((a, b) => b.value.length - a.value.length);
  for (const slot of slots) {
    if (excess <= 0) break;
    if (slot.value.length <= MIN_PIECE_CHARS) continue;
    excess -= cutSlot(slot, excess);
  }
  return copies;
}
