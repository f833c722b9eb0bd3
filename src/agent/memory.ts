/**
 * Long-term memory in the request: the user's remembered facts as one system message
 * ("## What I remember about the user"), built once per turn so it stays byte-identical
 * for every call of the turn.
 *
 * The facts come from the database, which (embedded PGlite) can take a few hundred ms to
 * open. So that the first model call does not wait for it, a `MemoryCache` (a small file kept
 * by the CLI) supplies the facts as of the last run; the database answer refreshes the cache
 * for the next run. Without a cached entry the turn waits for the database once.
 */
import type { ChatMessage } from '../llm/types.js';
import { fillPrompt, loadPrompt } from '../prompts.js';
import type { MemoryRecord, Store } from '../store/types.js';

/** Facts beyond this many are left out of the request (oldest first are kept: stable prefix). */
export const MAX_MEMORY_FACTS = 50;

/** The facts as the request shows them, as of some earlier moment (rendered lines). */
export interface MemoryCache {
  get(user: string): string[] | undefined;
  set(user: string, lines: string[]): void;
}

export function memoryLines(facts: readonly MemoryRecord[]): string[] {
  return facts.slice(0, MAX_MEMORY_FACTS).map((f) => `- ${f.fact} (${f.id})`);
}

export function memoryMessageFrom(lines: readonly string[]): ChatMessage | null {
  if (lines.length === 0) return null;
  return { role: 'system', content: fillPrompt(loadPrompt('agent/memory.md'), { facts: lines.join('\n') }) };
}

/** Reads the user's facts from the store and refreshes the cache when they changed. */
export async function refreshMemory(store: Promise<Store>, user: string, cache: MemoryCache | undefined): Promise<string[]> {
  const lines = memoryLines(await (await store).memories.list(user));
  const cached = cache?.get(user);
  if (cache && (cached === undefined || cached.join('\n') !== lines.join('\n'))) cache.set(user, lines);
  return lines;
}

/** The memory message of a turn: from the cache when it has an entry, else from the store. */
export async function memoryMessage(store: Promise<Store>, user: string, cache?: MemoryCache): Promise<ChatMessage | null> {
  const cached = cache?.get(user);
  const fresh = refreshMemory(store, user, cache);
  if (cached !== undefined) {
    fresh.catch(() => undefined);
    return memoryMessageFrom(cached);
  }
  return memoryMessageFrom(await fresh);
}
