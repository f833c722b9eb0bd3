/**
 * Text the summariser reads, and the mechanical digest used when it fails. Messages are
 * rendered compactly (one labelled block each, thinking dropped, tool arguments shortened)
 * and cut to fit the summariser's own window: its request must fit num_ctx just like any other.
 */
import type { ChatMessage } from '../../llm/types.js';
import { headTail } from './shrink.js';
import { isSummaryAck, isSummaryMessage, summaryBody } from './summary-message.js';

/** Tool arguments rarely matter beyond their first few hundred characters (paths, commands). */
const MAX_ARGS_CHARS = 300;

/** No message block is cut below this: shorter than a line or two says nothing. */
const MIN_BLOCK_CHARS = 200;

function argsText(args: unknown): string {
  if (typeof args === 'string') return args;
  try {
    return JSON.stringify(args ?? {});
  } catch {
    return String(args);
  }
}

/** One message as a labelled block, cut (head+tail) to `maxChars`. */
export function renderMessage(m: ChatMessage, maxChars: number): string {
  let text: string;
  if (isSummaryMessage(m)) {
    text = `EARLIER SUMMARY:\n${summaryBody(m)}`;
  } else if (m.role === 'assistant') {
    const calls = (m.tool_calls ?? []).map((c) => `→ called ${c.name} ${headTail(argsText(c.arguments), MAX_ARGS_CHARS)}`);
    text = ['ASSISTANT:', m.content.trim(), ...calls].filter((s) => s.length > 0).join('\n');
  } else if (m.role === 'tool') {
    text = `TOOL RESULT${m.tool_name ? ` (${m.tool_name})` : ''}:\n${m.content}`;
  } else {
    text = `${m.role.toUpperCase()}:\n${m.content}`;
  }
  return headTail(text, maxChars);
}

/**
 * The conversation as plain text of at most ~`maxChars` characters. Every block is capped at a
 * quarter of the room; when the whole still does not fit, the first block (the earlier summary
 * or the original request) is pinned and the newest blocks fill the rest, with a note saying
 * how many in between were left out.
 */
export function renderTranscript(messages: readonly ChatMessage[], maxChars: number): string {
  const room = Math.max(MIN_BLOCK_CHARS, maxChars);
  const cap = Math.max(MIN_BLOCK_CHARS, Math.floor(room / 4));
  const blocks = messages.filter((m) => !isSummaryAck(m)).map((m) => renderMessage(m, cap));
  const sep = '\n\n';
  let total = 0;
  for (const b of blocks) total += b.length + sep.length;
  if (total <= room || blocks.length === 0) return blocks.join(sep);

  const first = headTail(blocks[0] as string, Math.floor(room / 3));
  const noteRoom = 48;
  let left = room - first.length - noteRoom;
  const tail: string[] = [];
  for (let i = blocks.length - 1; i >= 1; i--) {
    const b = blocks[i] as string;
    if (b.length + sep.length <= left) {
      tail.push(b);
      left -= b.length + sep.length;
    } else {
      // The newest block is always included, cut to what is left.
      if (tail.length === 0 && left > MIN_BLOCK_CHARS / 2) tail.push(headTail(b, left - sep.length));
      break;
    }
  }
  const omitted = blocks.length - 1 - tail.length;
  const parts = [first];
  if (omitted > 0) parts.push(`[… ${omitted} messages omitted …]`);
  parts.push(...tail.reverse());
  return parts.join(sep);
}

/**
 * The digest kept when the model cannot summarise: the earlier summary, the first request, the
 * tools called (with counts) and the last assistant reply, each cut, the whole at most
 * `maxChars`. Mechanical, but it keeps the task and the thread of the work.
 */
export function mechanicalSummary(older: readonly ChatMessage[], maxChars: number): string {
  const piece = Math.max(MIN_BLOCK_CHARS, Math.floor(maxChars / 4));
  const lines: string[] = ['(Mechanical digest: the model summary was unavailable, so earlier messages were dropped.)'];
  const earlier = older.find(isSummaryMessage);
  if (earlier) lines.push(`Earlier summary:\n${headTail(summaryBody(earlier), piece)}`);
  const task = older.find((m) => m.role === 'user' && !isSummaryMessage(m));
  if (task) lines.push(`First request:\n${headTail(task.content.trim(), piece)}`);
  const counts = new Map<string, number>();
  for (const m of older) for (const c of m.tool_calls ?? []) counts.set(c.name, (counts.get(c.name) ?? 0) + 1);
  if (counts.size > 0) lines.push(`Tools called: ${[...counts].map(([name, n]) => (n > 1 ? `${name} ×${n}` : name)).join(', ')}`);
  const last = [...older].reverse().find((m) => m.role === 'assistant' && !isSummaryAck(m) && m.content.trim().length > 0);
  if (last) lines.push(`Last assistant reply:\n${headTail(last.content.trim(), piece)}`);
  return headTail(lines.join('\n\n'), maxChars);
}
