/**
 * The conversation as Phase 1 sees it (seed 000: "windowed to the most recent ~20k chars of
 * conversation, the original task statement is pinned"). Pure: text in, text out.
 */
import type { ChatMessage } from '../../llm/types.js';

/** Default window (seed: ~20k chars); small enough to prefill quickly on local models. */
export const PLANNING_WINDOW_CHARS = 20_000;

/** A tool result is evidence the planner skims, not reads: this much of its head is kept. */
const TOOL_RESULT_CHARS = 400;

/** Tool-call arguments are shown for orientation only. */
const TOOL_ARGS_CHARS = 160;

/** The pinned task may take at most this share of the window, so recent turns always fit too. */
const TASK_SHARE = 0.5;

const TASK_HEADER = 'ORIGINAL TASK:\n';
const CONVERSATION_HEADER = '\n\nCONVERSATION (oldest first):\n';

/**
 * Renders the planner's view of `conversation`: the original `task` pinned at the top (never
 * dropped; a task longer than half the window keeps its head and tail), then the most recent
 * messages that fit in `maxChars` in order. System messages are skipped (the planner has its
 * own), tool results are cut to a short head, reasoning is dropped, and a message identical to
 * the pinned task is not repeated.
 */
export function planningWindow(conversation: readonly ChatMessage[], task: string, maxChars = PLANNING_WINDOW_CHARS): string {
  const pinned = TASK_HEADER + squeeze(task.trim(), Math.floor(maxChars * TASK_SHARE));
  const rendered = conversation
    .filter((m) => m.role !== 'system' && !(m.role === 'user' && m.content.trim() === task.trim()))
    .map(renderMessage)
    .filter((text) => text.length > 0);

  let budget = maxChars - pinned.length - CONVERSATION_HEADER.length;
  const kept: string[] = [];
  for (let i = rendered.length - 1; i >= 0 && budget > 0; i--) {
    const text = rendered[i] ?? '';
    const cost = text.length + 2;
    if (cost <= budget) {
      kept.unshift(text);
      budget -= cost;
      continue;
    }
    // The newest message always appears, even cut: it is usually what prompted the plan.
    if (kept.length === 0) kept.unshift(squeeze(text, Math.max(budget - 2, 0)));
    break;
  }
  if (kept.length === 0) return pinned;
  const omitted = rendered.length - kept.length;
  const note = omitted > 0 ? `[${omitted} earlier message(s) omitted]\n\n` : '';
  return pinned + CONVERSATION_HEADER + note + kept.join('\n\n');
}

function renderMessage(m: ChatMessage): string {
  switch (m.role) {
    case 'user':
      return `USER: ${m.content.trim()}`;
    case 'assistant': {
      const calls = (m.tool_calls ?? []).map((c) => `-> ${c.name}(${head(stringifyArgs(c.arguments), TOOL_ARGS_CHARS)})`);
      const text = m.content.trim();
      if (!text && calls.length === 0) return '';
      return ['ASSISTANT:' + (text ? ` ${text}` : ''), ...calls].join('\n');
    }
    case 'tool': {
      const body = m.content.trim();
      const size = body.length > TOOL_RESULT_CHARS ? ` (${body.length} chars)` : '';
      return `TOOL RESULT ${m.tool_name ?? 'tool'}${size}: ${head(body, TOOL_RESULT_CHARS)}`;
    }
    case 'system':
      return '';
  }
}

function stringifyArgs(args: unknown): string {
  if (typeof args === 'string') return args;
  try {
    return JSON.stringify(args) ?? '';
  } catch {
    return String(args);
  }
}

/** First `max` chars with an ellipsis when cut. */
function head(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/** Head and tail of `text` within `max` chars, with the number of chars left out between them. */
function squeeze(text: string, max: number): string {
  if (text.length <= max) return text;
  // The marker's length depends on the count it shows; sizing it for the upper bound is enough.
  const room = Math.max(max - `\n[… ${text.length} chars omitted …]\n`.length, 0);
  const marker = `\n[… ${text.length - room} chars omitted …]\n`;
  const headChars = Math.ceil(room * 0.7);
  return text.slice(0, headChars) + marker + text.slice(text.length - (room - headChars));
}
