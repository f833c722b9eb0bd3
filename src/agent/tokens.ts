/**
 * Token estimates between real counts. Ollama reports the real prompt size
 * (`prompt_eval_count`) after each call; between calls navi adds what it appended since,
 * at chars/3 — deliberately pessimistic so compression and the size check fire early
 * rather than after Ollama has silently truncated the prompt.
 */
import type { ChatMessage } from '../llm/types.js';

/** chars per token used for estimates; 3 over-counts typical text (≈4), erring on the safe side. */
export const CHARS_PER_TOKEN = 3;

/** Characters a message contributes to a request (content, tool call arguments, names). */
export function messageChars(m: ChatMessage): number {
  let n = m.content.length + m.role.length + 4;
  // Reasoning goes back to the model within its turn (ollama-mapping.ts).
  if (m.thinking) n += m.thinking.length;
  if (m.tool_calls) {
    for (const c of m.tool_calls) {
      n += c.name.length + (typeof c.arguments === 'string' ? c.arguments.length : JSON.stringify(c.arguments ?? {}).length);
    }
  }
  if (m.tool_name) n += m.tool_name.length;
  return n;
}

export function charsToTokens(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/**
 * Estimated prompt tokens: the last real baseline plus chars/3 of what was added since, or
 * chars/3 of everything before the first call. A baseline far below the heuristic (an
 * Ollama build that counts only the uncached suffix) is not trusted.
 */
export function estimateTokens(input: { baseline: number | null; charsSinceBaseline: number; totalChars: number }): number {
  const heuristic = charsToTokens(input.totalChars);
  if (input.baseline === null || input.baseline < heuristic / 4) return heuristic;
  return input.baseline + charsToTokens(input.charsSinceBaseline);
}
