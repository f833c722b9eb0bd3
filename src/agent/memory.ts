/**
 * Long-term memory in the request: the user's remembered facts as one system message
 * ("## What I remember about the user"), built once per turn so it stays byte-identical
 * for every call of the turn.
 */
import type { ChatMessage } from '../llm/types.js';
import { fillPrompt, loadPrompt } from '../prompts.js';
import type { Store } from '../store/types.js';

/** Facts beyond this many are left out of the request (oldest first are kept: stable prefix). */
export const MAX_MEMORY_FACTS = 50;

export async function memoryMessage(store: Promise<Store>, user: string): Promise<ChatMessage | null> {
  const facts = await (await store).memories.list(user);
  if (facts.length === 0) return null;
  const lines = facts.slice(0, MAX_MEMORY_FACTS).map((f) => `- ${f.fact} (${f.id})`);
  return { role: 'system', content: fillPrompt(loadPrompt('agent/memory.md'), { facts: lines.join('\n') }) };
}
