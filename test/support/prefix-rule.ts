/**
 * The prefix rule of SPEC §8 and issue 17, judged on what the server renders: between two
 * consecutive requests of one conversation, request N's WHOLE rendered prompt, less its last few
 * tokens, is a prefix of request N+1's.
 *
 * Why "less its last few tokens": since v0.30 Ollama sends the rendered string to llama-server
 * (`cache_prompt: true`, llm/llama_server.go 1555-1562), which reuses the longest common token
 * prefix. SWA and hybrid models (gpt-oss, gemma3, qwen3.5, qwen3-next, nemotron-h: server/sched.go
 * 507) cannot roll their cache back, so they resume only from a context checkpoint, and
 * checkpoints are made only near the end of each prompt: `checkpoint_offsets[] = {4 + n_ubatch, 4}`
 * (llama.cpp tools/server/server-context.cpp; the audit
 * ../shared/research/ollama-wire-2026-12.md D6). So the next prompt must keep everything of the
 * previous one up to its last 4 tokens, or at least n_ubatch (512) more tokens are prefilled again.
 *
 * Tokens are counted with an approximate tokenizer (`approximateTokens`): the special tokens of
 * the Qwen and GLM vocabularies whole, the rest split by the Qwen2 pre-tokenizer pattern, each
 * piece one token. BPE never merges across pieces, so a piece is one real token or more: at a
 * prompt's end (special tokens, role names, newlines — one token each in both vocabularies) the
 * count is exact; inside long words it counts fewer tokens than the model would.
 *
 * The one exception granted is the one SPEC §8 names where the template decides: at a new user
 * turn, the qwen3 template and the qwen3.5 renderer re-render the turns before it themselves
 * (thinking before the last query dropped, qwen3's ` /think` moved). A pair is excused only when
 * every message of request N is repeated unchanged (thinking included) at the start of N+1 and
 * N+1 adds a real user query after them. Compressions and profile switches (also excused by the
 * SPEC) are not recognised: tests of this rule run without them.
 */
import { isDeepStrictEqual } from 'node:util';
import { bindMessages, isRecord, type Rendered } from './render-common.js';
import { commonPrefixLength, renderRequest, rendererFor, type RendererName } from './render-prompt.js';

/** The last tokens of a prompt that the next one need not keep (the checkpoint at N_end − 4). */
export const CHECKPOINT_TAIL_TOKENS = 4;

/**
 * Special tokens, matched whole: ChatML (`<|im_start|>`, `<|im_end|>`), GLM's role tokens and
 * `[gMASK]<sop>`, and the tag tokens both vocabularies add (`<think>`, `<tool_call>`,
 * `<tool_response>`, `<arg_key>`, `<arg_value>` and their closing forms).
 */
const SPECIAL = /<\|[a-z_]+\|>|\[gMASK\]|<sop>|<\/?(?:think|tool_call|tool_response|arg_key|arg_value)>/gu;

/** The Qwen2 pre-tokenizer pattern (tokenizer.json `pre_tokenizer`; llama.cpp LLAMA_VOCAB_PRE_TYPE_QWEN2). */
const PIECE = /(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;

/** `text` as approximate tokens (see the file comment); their concatenation is `text`. */
export function approximateTokens(text: string): string[] {
  const out: string[] = [];
  let at = 0;
  const plain = (end: number): void => {
    if (end > at) out.push(...(text.slice(at, end).match(PIECE) ?? []));
  };
  for (const m of text.matchAll(SPECIAL)) {
    plain(m.index);
    out.push(m[0]);
    at = m.index + m[0].length;
  }
  plain(text.length);
  return out;
}

/** `text` less its last `tokens` approximate tokens: what a checkpoint near its end holds. */
export function withoutLastTokens(text: string, tokens = CHECKPOINT_TAIL_TOKENS): string {
  const pieces = approximateTokens(text);
  const cut = pieces.slice(Math.max(0, pieces.length - tokens)).join('').length;
  return text.slice(0, text.length - cut);
}

export interface PrefixRuleOptions {
  /** Render every request with this renderer instead of the one its model name picks. */
  renderer?: RendererName;
  /** Prefixed to each break (which run or conversation). */
  label?: string;
}

/**
 * Every consecutive pair of `bodies` (one conversation, in order) that breaks the rule, one
 * description each: which request, the renderer, where the two renders first differ (the
 * message each offset falls in, text on both sides), and which message of the request changed.
 */
export function prefixRuleBreaks(bodies: ReadonlyArray<Record<string, unknown>>, opts: PrefixRuleOptions = {}): string[] {
  const breaks: string[] = [];
  for (let i = 0; i + 1 < bodies.length; i++) {
    const prev = bodies[i] ?? {};
    const next = bodies[i + 1] ?? {};
    const why = pairBreak(prev, next, opts.renderer);
    if (why !== undefined) breaks.push(`${opts.label !== undefined ? `${opts.label}: ` : ''}request ${i} → ${i + 1} ${why}`);
  }
  return breaks;
}

function pairBreak(prev: Record<string, unknown>, next: Record<string, unknown>, forced: RendererName | undefined): string | undefined {
  const renderer = forced ?? rendererFor(next.model);
  if (forced === undefined && rendererFor(prev.model) !== renderer) return `(${renderer}): the model changed from ${String(prev.model)} to ${String(next.model)}`;
  const a = renderRequest(prev, renderer);
  const b = renderRequest(next, renderer);
  const kept = withoutLastTokens(a.text);
  if (b.text.startsWith(kept)) return undefined;
  if (newTurnExcused(prev, next, renderer)) return undefined;
  const at = commonPrefixLength(kept, b.text);
  return (
    `(${renderer}): request N's prompt less its last ${CHECKPOINT_TAIL_TOKENS} tokens (${kept.length} of ${a.text.length} chars) ` +
    `is not a prefix of request N+1's; first difference at char ${at}, ` +
    `in N's ${placeOf(prev, a, at)} and N+1's ${placeOf(next, b, at)}\n` +
    `  N:   ${JSON.stringify(around(a.text, at))}\n` +
    `  N+1: ${JSON.stringify(around(b.text, at))}\n` +
    `  messages: ${messageChange(prev, next)}`
  );
}

/**
 * SPEC §8's exception where the template decides (see the file comment): at a new user turn the
 * qwen3 template and the qwen3.5 renderer re-render earlier turns themselves; excused only when
 * every message of `prev` is repeated unchanged at the start of `next`.
 */
export function newTurnExcused(prev: Record<string, unknown>, next: Record<string, unknown>, renderer: RendererName = rendererFor(next.model)): boolean {
  if (renderer !== 'qwen3' && renderer !== 'qwen3.5') return false;
  const before = rawMessages(prev);
  const after = rawMessages(next);
  if (after.length <= before.length) return false;
  if (!before.every((m, k) => isDeepStrictEqual(m, after[k]))) return false;
  return bindMessages(after.slice(before.length)).some((m) => m.role === 'user' && !isToolResponse(m.content));
}

function isToolResponse(content: string): boolean {
  const c = content.trim();
  return c.startsWith('<tool_response>') && c.endsWith('</tool_response>');
}

function rawMessages(body: Record<string, unknown>): unknown[] {
  return Array.isArray(body.messages) ? (body.messages as unknown[]) : [];
}

/** Which part of a request's render holds char `at`: "message 4 (tool: "a.txt…")" or the header. */
function placeOf(body: Record<string, unknown>, r: Rendered, at: number): string {
  let index = -1;
  r.starts.forEach((start, k) => {
    if (start <= at && (index < 0 || start >= (r.starts[index] ?? 0))) index = k;
  });
  if (index < 0) return 'header (system text and tools)';
  const m = bindMessages(body.messages)[index];
  return `message ${index} (${m?.role ?? '?'}: ${JSON.stringify(clip(m?.content ?? '', 60))})`;
}

/** The first message of `prev` that `next` does not repeat unchanged, and how it differs. */
export function messageChange(prev: Record<string, unknown>, next: Record<string, unknown>): string {
  const before = rawMessages(prev);
  const after = rawMessages(next);
  const k = before.findIndex((m, j) => !isDeepStrictEqual(m, after[j]));
  if (k < 0) return `all ${before.length} messages of N repeated unchanged in N+1 (the template re-rendered them)`;
  const was = before[k];
  const now = after[k];
  if (now === undefined) return `N's message ${k} is missing from N+1 (N+1 has ${after.length} messages)`;
  if (!isRecord(was) || !isRecord(now)) return `message ${k} differs`;
  const fields = [...new Set([...Object.keys(was), ...Object.keys(now)])].filter((f) => !isDeepStrictEqual(was[f], now[f]));
  const detail = fields.map((f) => `${f} was ${show(was[f])}, now ${show(now[f])}`).join('; ');
  return `message ${k} (${String(was.role)}) changed: ${detail}`;
}

function show(value: unknown): string {
  if (value === undefined) return 'absent';
  return JSON.stringify(typeof value === 'string' ? clip(value, 160, true) : value).slice(0, 300);
}

/** The first `n` chars, or with `tail` the last `n` (where an appended note shows). */
function clip(text: string, n: number, tail = false): string {
  if (text.length <= n) return text;
  return tail ? `…${text.slice(-n)}` : `${text.slice(0, n)}…`;
}

/** About 100 characters of `text` around `at`. */
function around(text: string, at: number): string {
  return text.slice(Math.max(0, at - 50), at + 50);
}

/** A chat request's conversation: its system message and first user message. */
export function conversationKey(body: Record<string, unknown>): string {
  const messages = bindMessages(body.messages);
  const system = messages.find((m) => m.role === 'system')?.content ?? '';
  const user = messages.find((m) => m.role === 'user')?.content ?? '';
  return `${system}\u0000${user}`;
}

/** Chat bodies grouped by conversation (first-seen order; requests in order within each). */
export function conversations(bodies: ReadonlyArray<Record<string, unknown>>): Array<Array<Record<string, unknown>>> {
  const groups = new Map<string, Array<Record<string, unknown>>>();
  for (const body of bodies) {
    const key = conversationKey(body);
    groups.set(key, [...(groups.get(key) ?? []), body]);
  }
  return [...groups.values()];
}
