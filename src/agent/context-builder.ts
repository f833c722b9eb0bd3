/**
 * Builds each model request: system prompt (persona + "---" + profile prompt), then the
 * stored context with system messages stripped, then transient per-call messages at the end.
 * The system prompt is cached per profile so the request prefix stays byte-identical across
 * calls (Ollama reuses its KV cache only for an unchanged prefix).
 */
import type { ChatMessage } from '../llm/types.js';
import type { ProfileSet } from '../profiles/types.js';
import { systemPromptFor } from '../profiles/load.js';

export class ContextBuilder {
  private readonly cache = new Map<string, string>();

  constructor(private readonly profiles: ProfileSet) {}

  systemPrompt(profileId: string): string {
    let prompt = this.cache.get(profileId);
    if (prompt === undefined) {
      const profile = this.profiles.profiles.get(profileId);
      if (!profile) throw new Error(`unknown profile '${profileId}'`);
      prompt = systemPromptFor(this.profiles, profile);
      this.cache.set(profileId, prompt);
    }
    return prompt;
  }

  /** Drops the cached prompt after a profile reload or switch. */
  invalidate(profileId?: string): void {
    if (profileId === undefined) this.cache.clear();
    else this.cache.delete(profileId);
  }

  build(profileId: string, context: readonly ChatMessage[], transient: readonly ChatMessage[] = []): ChatMessage[] {
    const out: ChatMessage[] = [{ role: 'system', content: this.systemPrompt(profileId) }];
    for (const m of context) if (m.role !== 'system') out.push(m);
    for (const m of transient) out.push(m);
    return out;
  }
}
