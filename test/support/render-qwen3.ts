/**
 * The qwen3 library Go template (`ollama show --template qwen3:8b`), for models without a Go
 * renderer (server/prompt.go 135-156: no `Config.Renderer` → `m.Template.Execute`).
 *
 * Two stages, as in github.com/ollama/ollama:
 * 1. template/template.go collate (357-374, called by Template.Execute 257-282): every `system`
 *    message's content, wherever it stands, is joined with "\n\n" into `.System`, which the
 *    template prints at the top; consecutive messages of one role are merged (content joined with
 *    "\n\n"; the later message's thinking and tool_calls are lost) except `tool` messages.
 * 2. The qwen3 library template (not in the repository; the repository's older copy without
 *    thinking is tools/testdata/qwen3.gotmpl before 9f8a18ec0). Its whitespace is reproduced
 *    exactly. Facts it encodes that matter for prefix reuse:
 *    - the last user message gets " /think" or " /no_think" (qwen3 is a thinking model, so
 *      server/routes.go ChatHandler 2616-2620 sets `think` when it is absent, and IsThinkSet is
 *      true: server/prompt.go 146-152);
 *    - an assistant message's `thinking` is printed only when it comes after the last user
 *      message (or is the last message): a new user message drops earlier thinking;
 *    - an assistant message with content prints only the content, not its tool calls;
 *    - a final assistant message is left open (no <|im_end|>); otherwise the prompt ends with
 *      `<|im_start|>assistant\n` (plus an empty think block when `think` is false).
 * Before rendering, server/routes.go filterThinkTags (3122-3148, model family qwen3) cuts
 * `<think>…</think>` from assistant content before the last user message.
 */
import { goJson, goProperty, isRecord, sortKeys, type BoundMessage, type Rendered, type ThinkSetting } from './render-common.js';

export function renderQwen3(messages: BoundMessage[], tools: unknown[], think: ThinkSetting): Rendered {
  const { system, collated, owner } = collate(filterThinkTags(messages));

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
  const collatedStarts: number[] = [];
  collated.forEach((m, i) => {
    collatedStarts.push(text.length);
    const last = i === collated.length - 1;
    if (m.role === 'user') {
      const toggle = i === lastUserIdx ? (think.on ? ' /think' : ' /no_think') : '';
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
      if (!think.on) text += '<think>\n\n</think>\n\n';
    }
  });
  return { text, header, starts: owner.map((o) => collatedStarts[o] ?? header.length) };
}

/** template/template.go collate (357-374), without mutating the caller's messages. */
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
 * server/routes.go filterThinkTags (3122-3148, qwen3 family): `<think>…</think>` is cut from the
 * content of assistant messages before the last user message (thinking/parser.go
 * Parser.AddContent, one call: an unclosed or partial tag leaves no content; text without a tag
 * is kept as is).
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
 * templateToolFunction 419-441 and api/types.go ToolProperty): struct fields in declaration
 * order, unknown fields dropped, top-level `properties` a Go map (keys sorted).
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

/** `{{ .Function.Arguments }}`: template/template.go templateArgs.String (384-393), a Go map (sorted keys). */
function goArguments(args: unknown): string {
  return args === undefined || args === null ? '{}' : goJson(sortKeys(args));
}
