/**
 * The prompt a real Ollama would build from a `/api/chat` body, so tests can see what the model
 * (and its KV cache) sees: whether a request's prompt extends the previous one, and where it
 * breaks.
 *
 * Which renderer: a model with a Go renderer (`Config.Renderer`) is rendered by it, any other by
 * its Go template after collate (server/prompt.go 135-156; server/routes.go 2357-2385). The fake
 * picks by model name, as the library's models are built (`rendererFor`):
 * - `qwen3.5*` → the qwen3.5 Go renderer (render-qwen35.ts; model/renderers/renderer.go 69-71);
 * - `qwen3.8*` → its Qwen3.8 variant (renderer.go 72-73, qwen35.go 61-69);
 * - `glm-4.7*` → the GLM-4.7 Go renderer, which keeps every turn's thinking (render-glm47.ts;
 *   renderer.go 106-107);
 * - anything else → the qwen3 library Go template (render-qwen3.ts), the fake's default model.
 * The name is matched without its namespace and tag (`library/qwen3.5:9b` → `qwen3.5`).
 * Truncation to num_ctx (server/prompt.go chatPrompt 35-74) is not modelled.
 *
 * Two prefix checks: `prefixBreaks` here (SPEC §8's older rule, N without its last message) and
 * the checkpoint rule in prefix-rule.ts (N's whole prompt less its last few tokens).
 */
import { bindMessages, bindTools, thinkSetting, type RenderFn, type Rendered } from './render-common.js';
import { renderGlm47 } from './render-glm47.js';
import { renderQwen3 } from './render-qwen3.js';
import { renderQwen35, renderQwen38 } from './render-qwen35.js';

export type RendererName = 'qwen3' | 'qwen3.5' | 'qwen3.8' | 'glm-4.7';

export const RENDERERS: readonly RendererName[] = ['qwen3', 'qwen3.5', 'qwen3.8', 'glm-4.7'];

const RENDER: Record<RendererName, RenderFn> = {
  qwen3: renderQwen3,
  'qwen3.5': renderQwen35,
  'qwen3.8': renderQwen38,
  'glm-4.7': renderGlm47,
};

/** The renderer the fake uses for a model name (see the mapping above). */
export function rendererFor(model: unknown): RendererName {
  let name = typeof model === 'string' ? model.toLowerCase() : '';
  const colon = name.lastIndexOf(':');
  if (colon > name.lastIndexOf('/')) name = name.slice(0, colon);
  name = name.slice(name.lastIndexOf('/') + 1);
  if (name.startsWith('qwen3.5')) return 'qwen3.5';
  if (name.startsWith('qwen3.8')) return 'qwen3.8';
  if (name.startsWith('glm-4.7')) return 'glm-4.7';
  return 'qwen3';
}

/**
 * The render of a request body, with where each of its messages starts. `renderer` overrides
 * the choice by model name. Throws where the server would answer 500 (a renderer's error).
 */
export function renderRequest(body: Record<string, unknown>, renderer: RendererName = rendererFor(body.model)): Rendered {
  return RENDER[renderer](bindMessages(body.messages), bindTools(body.tools), thinkSetting(body.think));
}

/** The prompt Ollama would render for this chat request body. */
export function renderPrompt(body: Record<string, unknown>, renderer?: RendererName): string {
  return renderRequest(body, renderer).text;
}

/** The block at the top of the prompt before the first message (system text and tools), or ''. */
export function renderSystem(body: Record<string, unknown>, renderer?: RendererName): string {
  return renderRequest(body, renderer).header;
}

/**
 * For consecutive request bodies of one conversation: where the render of request N, up to the
 * start of its last message, is not a prefix of the render of request N+1 (the last message may
 * be a per-call injection that the next request does not repeat). One description per break.
 */
export function prefixBreaks(bodies: Array<Record<string, unknown>>): string[] {
  const breaks: string[] = [];
  for (let i = 0; i + 1 < bodies.length; i++) {
    const stable = stablePart(renderRequest(bodies[i] ?? {}));
    const next = renderPrompt(bodies[i + 1] ?? {});
    if (next.startsWith(stable)) continue;
    const at = commonPrefixLength(stable, next);
    breaks.push(
      `request ${i} → ${i + 1}: prompt differs at char ${at} of ${stable.length}: ` +
        `was ${JSON.stringify(around(stable, at))}, now ${JSON.stringify(around(next, at))}`,
    );
  }
  return breaks;
}

/** Share of `next`'s prompt that a KV cache holding `prev`'s prompt could reuse (0..1). */
export function prefixReuse(prev: Record<string, unknown>, next: Record<string, unknown>): number {
  const a = renderPrompt(prev);
  const b = renderPrompt(next);
  return b.length === 0 ? 1 : commonPrefixLength(a, b) / b.length;
}

/**
 * Share of what request `next` could reuse of `prev`'s prompt that it does reuse (0..1): the
 * common prefix of the two renders over the length of `prev`'s render up to the start of its last
 * message (the part prefixBreaks requires to stay; the last message may carry per-call
 * injections). 1 exactly when prefixBreaks([prev, next]) finds no break. Unlike prefixReuse it
 * does not count what `next` adds, so a well-formed tool loop reaches 1.
 */
export function prefixKept(prev: Record<string, unknown>, next: Record<string, unknown>): number {
  const stable = stablePart(renderRequest(prev));
  if (stable.length === 0) return 1;
  return Math.min(1, commonPrefixLength(stable, renderPrompt(next)) / stable.length);
}

/** The render up to the start of its last message (the system block when there are no messages). */
function stablePart(r: Rendered): string {
  const last = r.starts.at(-1);
  return last === undefined ? r.header : r.text.slice(0, last);
}

export function commonPrefixLength(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** About 80 characters of `text` around `at`. */
function around(text: string, at: number): string {
  return text.slice(Math.max(0, at - 40), at + 40);
}

