/**
 * A stored context can end with tool calls that never got their results: navi was killed
 * (`kill -9`, power loss) or lost its database between a call and its result. Ollama's chat
 * templates expect every call to be answered, so before a continued session goes on, each
 * unanswered call gets a result saying what is known: nothing.
 */
import type { ChatMessage } from '../llm/types.js';

export const UNANSWERED_RESULT =
  'no result: navi stopped before this call finished; it may or may not have run — check before repeating it';

/** Tool results to append so the last assistant message's calls are all answered (pure). */
export function unansweredCalls(context: readonly ChatMessage[]): ChatMessage[] {
  let i = context.length - 1;
  while (i >= 0 && context[i]?.role === 'tool') i--;
  const last = context[i];
  if (last?.role !== 'assistant' || !last.tool_calls?.length) return [];
  const answered = context.length - 1 - i;
  return last.tool_calls
    .slice(answered)
    .map((c) => ({ role: 'tool', tool_name: c.name, ...(c.id !== undefined && { tool_call_id: c.id }), content: UNANSWERED_RESULT }));
}
