/**
 * What `think` the helper calls send (planner, summariser, memory extraction). They want no
 * reasoning: it eats the window and leaks into the text. `false` turns it off on most thinking
 * models, but not on gpt-oss: the harmony format always reasons and the server ignores booleans
 * for it (docs/capabilities/thinking.mdx: "requires think to be set to low/medium/high. Passing
 * true/false is ignored"; "the trace cannot be fully disabled"), so it reasons at its default
 * effort. "low" is the cheapest it offers.
 */
import type { LlmClient, ModelDetails, ThinkValue } from './types.js';

/**
 * Families that go through harmony. server/routes.go 77-87 `shouldUseHarmony`: the model family
 * is "gptoss" or "gpt-oss" (and the template has harmony tags); routes.go 2930 also takes a
 * model whose built-in parser is "harmony".
 */
const HARMONY_FAMILIES = new Set(['gptoss', 'gpt-oss']);

/** Whether the model cannot turn its reasoning off (harmony), judged from `/api/show`. */
export function cannotDisableThinking(details: ModelDetails | null | undefined): boolean {
  if (details === null || details === undefined) return false;
  const harmony = (details.family !== undefined && HARMONY_FAMILIES.has(details.family.toLowerCase())) || details.parser === 'harmony';
  // A level to a model without `thinking` is an HTTP 400; unknown capabilities trust the family.
  return harmony && (details.capabilities === undefined || details.capabilities.includes('thinking'));
}

/** The `think` of a helper call: "low" where false would be ignored, else false. */
export function helperThinkValue(details: ModelDetails | null | undefined): ThinkValue {
  return cannotDisableThinking(details) ? 'low' : false;
}

/**
 * `helperThinkValue` for a model, asking `/api/show` (the adapter answers from its per-process
 * cache: the turn has already asked). A failed lookup sends false, as before: the helper call
 * itself reports a missing model or an unreachable server.
 */
export async function helperThink(llm: LlmClient, model: string, signal?: AbortSignal): Promise<ThinkValue> {
  const details = await llm.showModel(model, signal).catch(() => null);
  return helperThinkValue(details);
}
