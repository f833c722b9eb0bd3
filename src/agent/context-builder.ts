/**
 * The system prompt (persona + "---" + profile prompt), cached per profile so the request
 * prefix stays byte-identical across calls (Ollama reuses its KV cache only for an unchanged
 * prefix). The request itself is built by the turn (`Turn.buildRequest`).
 */
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

}
