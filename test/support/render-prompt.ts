/**
 * The prompt a real Ollama would build from a `/api/chat` body for a qwen3-style ChatML model,
 * so tests can see what the model (and its KV cache) sees: whether a request's prompt extends the
 * previous one, and where it breaks.
 *
 * Two stages, as in github.com/ollama/ollama:
 * 1. template/template.go collate (called by Template.Execute): every `system` message's content,
 *    wherever it stands, is joined with "\n\n" into `.System`, which the template prints at the
 *    top; consecutive messages of one role are merged (content joined with "\n\n"; the later
 *    message's thinking and tool_calls are lost) except `tool` messages.
 * 2. The qwen3 library template (`ollama show --template qwen3:8b`; not in the repository; the
 *    repository's older copy without thinking is tools/testdata/qwen3.gotmpl before 9f8a18ec0).
 *    Its whitespace is reproduced exactly. Facts it encodes that matter for prefix reuse:
 *    - the last user message gets " /think" or " /no_think" (qwen3 is a thinking model, so
 *      server/routes.go ChatHandler sets `think` when it is absent and IsThinkSet is true);
 *    - an assistant message's `thinking` is printed only when it comes after the last user
 *      message (or is the last message): a new user message drops earlier thinking;
 *    - an assistant message with content prints only the content, not its tool calls;
 *    - a final assistant message is left open (no <|im_end|>); otherwise the prompt ends with
 *      `<|im_start|>assistant\n` (plus an empty think block when `think` is false).
 * Truncation to num_ctx (server/prompt.go chatPrompt) is not modelled.
 */
import { goJson } from './fake-ollama-script.js';

/** One message after JSON binding (api/types.go Message; the role is lower-cased). */
interface BoundMessage {
  role: string;
  content: string;
  thinking: string;
  toolCalls: Array<{ name: string; arguments: unknown }>;
}

interface Rendered {
  text: string;
  /** The system block (empty when there is none). */
  header: string;
  /** Offset in `text` where each collated message's output starts. */
  starts: number[];
  /** The collated index of each request message. */
  owner: number[];
}

/** The prompt Ollama would render for this chat request body. */
export function renderPrompt(body: Record<string, unknown>): string {
  return render(body).text;
}

/** The system block at the top of the prompt: `.System` and the tools, or '' when neither. */
export function renderSystem(body: Record<string, unknown>): string {
  return render(body).header;
}

/**
 * For consecutive request bodies of one conversation: where the render of request N, up to the
 * start of its last message, is not a prefix of the render of request N+1 (the last message may
 * be a per-call injection that the next request does not repeat). One description per break.
 */
export function prefixBreaks(bodies: Array<Record<string, unknown>>): string[] {
  const breaks: string[] = [];
  for (let i = 0; i + 1 < bodies.length; i++) {
    const stable = stablePart(render(bodies[i] ?? {}));
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
  const stable = stablePart(render(prev));
  if (stable.length === 0) return 1;
  return Math.min(1, commonPrefixLength(stable, renderPrompt(next)) / stable.length);
}

/** The render up to the start of its last message (the system block when there are no messages). */
function stablePart(r: Rendered): string {
  const lastOwner = r.owner.at(-1);
  return lastOwner === undefined ? r.header : r.text.slice(0, r.starts[lastOwner]);
}

function render(body: Record<string, unknown>): Rendered {
  const messages = filterThinkTags(bindMessages(body.messages));
  const { system, collated, owner } = collate(messages);
  const tools = Array.isArray(body.tools) ? (body.tools as unknown[]) : [];
  // server/routes.go ChatHandler: a thinking-capable model gets think=true when it is absent;
  // server/prompt.go renderPrompt: Think = ThinkValue.Bool(), IsThinkSet = think != nil.
  const think = body.think === undefined || body.think === null || body.think === true || typeof body.think === 'string';

  let header = '';
  if (system !== '' || tools.length > 0) {
    header = '<|im_start|>system\n';
    if (system !== '') header += `\n${system}`;
    if (tools.length > 0) header += toolsBlock(tools);
    header += '<|im_end|>\n';
  }

  let lastUserIdx = -1;
  collated.forEach((m, i) => {
    if (m.role === 'user') lastUserIdx = i;
  });

  let text = header;
  const starts: number[] = [];
  collated.forEach((m, i) => {
    starts.push(text.length);
    const last = i === collated.length - 1;
    if (m.role === 'user') {
      const toggle = i === lastUserIdx ? (think ? ' /think' : ' /no_think') : '';
      text += `<|im_start|>user\n${m.content}${toggle}<|im_end|>\n`;
    } else if (m.role === 'assistant') {
      text += '<|im_start|>assistant\n';
      if (m.thinking !== '' && (last || i > lastUserIdx)) text += `<think>${m.thinking}</think>\n`;
      if (m.content !== '') {
        text += m.content;
      } else if (m.toolCalls.length > 0) {
        text += '<tool_call>\n';
        for (const call of m.toolCalls) text += `{"name": "${call.name}", "arguments": ${goArguments(call.arguments)}}\n`;
        text += '</tool_call>';
      }
      if (!last) text += '<|im_end|>\n';
    } else if (m.role === 'tool') {
      text += `<|im_start|>user\n<tool_response>\n${m.content}\n</tool_response><|im_end|>\n`;
    }
    // System (and unknown) roles print nothing here; their text is in `.System` at the top.
    if (m.role !== 'assistant' && last) {
      text += '<|im_start|>assistant\n';
      if (!think) text += '<think>\n\n</think>\n\n';
    }
  });
  return { text, header, starts, owner };
}

/** template/template.go collate, without mutating the caller's messages. */
function collate(messages: BoundMessage[]): { system: string; collated: BoundMessage[]; owner: number[] } {
  const system: string[] = [];
  const collated: BoundMessage[] = [];
  const owner: number[] = [];
  for (const m of messages) {
    if (m.role === 'system') system.push(m.content);
    const prev = collated.at(-1);
    if (prev !== undefined && prev.role === m.role && m.role !== 'tool') {
      prev.content += `\n\n${m.content}`;
    } else {
      collated.push({ ...m });
    }
    owner.push(collated.length - 1);
  }
  return { system: system.join('\n\n'), collated, owner };
}

/**
 * server/routes.go filterThinkTags (qwen3 family): `<think>…</think>` is cut from the content of
 * assistant messages before the last user message (thinking/parser.go Parser.AddContent, one
 * call: an unclosed or partial tag leaves no content; text without a tag is kept as is).
 */
function filterThinkTags(messages: BoundMessage[]): BoundMessage[] {
  const finalUser = messages.map((m) => m.role).lastIndexOf('user');
  return messages.map((m, i) => {
    if (m.role !== 'assistant' || i >= finalUser) return m;
    const trimmed = m.content.replace(/^\s+/u, '');
    if (trimmed.startsWith('<think>')) {
      const after = trimmed.slice('<think>'.length).replace(/^\s+/u, '');
      const close = after.indexOf('</think>');
      return { ...m, content: close < 0 ? '' : after.slice(close + '</think>'.length).replace(/^\s+/u, '') };
    }
    return '<think>'.startsWith(trimmed) ? { ...m, content: '' } : m;
  });
}

function bindMessages(raw: unknown): BoundMessage[] {
  if (!Array.isArray(raw)) return [];
  return (raw as unknown[]).map((item) => {
    const m = isRecord(item) ? item : {};
    const calls = Array.isArray(m.tool_calls) ? (m.tool_calls as unknown[]) : [];
    return {
      role: typeof m.role === 'string' ? m.role.toLowerCase() : '',
      content: typeof m.content === 'string' ? m.content : '',
      thinking: typeof m.thinking === 'string' ? m.thinking : '',
      toolCalls: calls.map((c) => {
        const fn = isRecord(c) && isRecord(c.function) ? c.function : {};
        return { name: typeof fn.name === 'string' ? fn.name : '', arguments: fn.arguments };
      }),
    };
  });
}

/** The `{{- if .Tools }}` part of the qwen3 template's system block. */
function toolsBlock(tools: unknown[]): string {
  let out =
    '\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
    'You are provided with function signatures within <tools></tools> XML tags:\n<tools>';
  for (const tool of tools) {
    const fn = isRecord(tool) && isRecord(tool.function) ? tool.function : {};
    out += `\n{"type": "function", "function": ${goJson(goToolFunction(fn))}}`;
  }
  return (
    out +
    '\n</tools>\n\nFor each function call, return a json object with function name and arguments within ' +
    '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
  );
}

/**
 * `{{ .Function }}` as JSON the way Go marshals the bound tool (template/template.go
 * templateToolFunction and api/types.go ToolProperty): struct fields in declaration order,
 * unknown fields dropped, top-level `properties` a Go map (keys sorted).
 */
function goToolFunction(fn: Record<string, unknown>): Record<string, unknown> {
  const params = isRecord(fn.parameters) ? fn.parameters : {};
  const props = isRecord(params.properties) ? params.properties : undefined;
  const sorted = props === undefined ? null : Object.fromEntries(Object.keys(props).sort().map((k) => [k, goProperty(props[k])]));
  return {
    name: typeof fn.name === 'string' ? fn.name : '',
    description: typeof fn.description === 'string' ? fn.description : '',
    parameters: {
      type: typeof params.type === 'string' ? params.type : '',
      ...(params.$defs !== undefined ? { $defs: sortKeys(params.$defs) } : {}),
      ...(params.items !== undefined ? { items: sortKeys(params.items) } : {}),
      ...(Array.isArray(params.required) && params.required.length > 0 ? { required: params.required } : {}),
      properties: sorted,
    },
  };
}

/** api/types.go ToolProperty field order; `type` as PropertyType.MarshalJSON writes it. */
function goProperty(raw: unknown): Record<string, unknown> {
  const p = isRecord(raw) ? raw : {};
  const types = typeof p.type === 'string' ? [p.type] : Array.isArray(p.type) ? (p.type as unknown[]) : [];
  const out: Record<string, unknown> = {};
  if (Array.isArray(p.anyOf) && p.anyOf.length > 0) out.anyOf = (p.anyOf as unknown[]).map(goProperty);
  if (types.length > 0) out.type = types.length === 1 ? types[0] : types;
  if (p.items !== undefined && p.items !== null) out.items = sortKeys(p.items);
  if (typeof p.description === 'string' && p.description !== '') out.description = p.description;
  if (Array.isArray(p.enum) && p.enum.length > 0) out.enum = sortKeys(p.enum);
  // Nested properties are an insertion-ordered map (api/types.go ToolPropertiesMap).
  if (isRecord(p.properties)) {
    const nested = p.properties;
    out.properties = Object.fromEntries(Object.keys(nested).map((k) => [k, goProperty(nested[k])]));
  }
  if (Array.isArray(p.required) && p.required.length > 0) out.required = p.required;
  return out;
}

/** `{{ .Function.Arguments }}`: template/template.go templateArgs.String, a Go map (sorted keys). */
function goArguments(args: unknown): string {
  return args === undefined || args === null ? '{}' : goJson(sortKeys(args));
}

/** A value decoded into Go's `any`: objects become maps, which marshal with sorted keys. */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!isRecord(value)) return value;
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys(value[k])]));
}

function commonPrefixLength(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** About 80 characters of `text` around `at`. */
function around(text: string, at: number): string {
  return text.slice(Math.max(0, at - 40), at + 40);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
