/**
 * The optional post-turn worker (profile flag `memory_extraction_enabled`): one non-streaming
 * call asks the model for lasting facts about the user in the turn just finished; new ones are
 * stored with source `extraction`. Failures are silent: memory is a nicety, never a reason to
 * fail a run that already answered.
 */
import { fillPrompt, loadPrompt } from '../prompts.js';
import type { AgentDeps } from './agent-types.js';
import { renderTranscript } from './compression/render.js';
import { refreshMemory } from './memory.js';
import type { ChatUsage } from '../llm/types.js';
import type { TurnState } from './turn-state.js';

/** Facts per turn beyond this are noise, not memory. */
const MAX_NEW_FACTS = 5;
/** Transcript characters the extractor reads (the end of the turn matters most). */
const TRANSCRIPT_CHARS = 12_000;

/** The facts in a model answer: a JSON array of strings, possibly wrapped in prose or a fence. */
export function parseFacts(text: string): string[] {
  const match = /\[[\s\S]*\]/.exec(text);
  if (!match) return [];
  try {
    const parsed: unknown = JSON.parse(match[0]);
    if (!Array.isArray(parsed)) return [];
    return parsed
      .filter((f): f is string => typeof f === 'string')
      .map((f) => f.trim())
      .filter((f) => f.length > 0 && f.length <= 500)
      .slice(0, MAX_NEW_FACTS);
  } catch {
    return [];
  }
}

/** Runs the extraction when the profile asks for it; returns the usage of its call (the driver counts it), null when none was made. */
export async function extractMemories(turn: TurnState, deps: AgentDeps): Promise<ChatUsage | null> {
  if (!turn.profile.settings.memory_extraction_enabled || turn.isSubagent) return null;
  const store = await turn.store();
  const user = deps.user ?? 'local';
  const known = await store.memories.list(user);
  const prompt = fillPrompt(loadPrompt('memory/extract.md'), { known: known.map((m) => `- ${m.fact}`).join('\n') || '(none)' });
  const result = await deps.llm.chat({
    model: turn.model,
    messages: [
      { role: 'system', content: prompt },
      { role: 'user', content: renderTranscript(turn.context, TRANSCRIPT_CHARS) },
    ],
    think: false,
    numCtx: turn.numCtx,
    keepAlive: turn.settings.keepAlive,
    signal: turn.signal,
  });
  const facts = parseFacts(result.content);
  try {
    for (const fact of facts) await store.memories.add(user, fact, 'extraction', turn.sessionId);
    if (facts.length > 0) await refreshMemory(turn.store(), user, deps.memoryCache);
  } catch {
    // Silent (see above); the call was made, so its usage still counts.
  }
  return result.usage;
}
