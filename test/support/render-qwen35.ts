/**
 * Ollama's Go renderer for Qwen3.5 and Qwen3.8 (model/renderers/qwen35.go at fb3076099; selected
 * by renderer.go 69-73, "qwen3.5" and "qwen3.8"). Renderers bypass collate (server/prompt.go
 * 135-143): no system hoisting, no merging of consecutive messages. What it does differently from
 * the qwen3 Go template, each beside the code below:
 * - the tools block comes BEFORE the system text, in the same system turn (229-250);
 * - every message's content is TrimSpace'd (244, 252, 275, 287);
 * - a user message wrapped in <tool_response>…</tool_response> is not a query (268-281);
 * - a non-leading system message is rendered in place (292-296);
 * - an assistant message's thinking is rendered only after the last real query (298), or always
 *   on Qwen3.8 (alwaysRenderAssistantThinkBlock, 61-69);
 * - the reply is prefilled with `<think>\n` (348-356; `<think>\n\n</think>\n\n` when think is off).
 * Qwen3.8 also folds every system message into one leading turn (136-170), refuses a request
 * without a user query (172-200) and prints a reasoning-effort line for some think levels (113-134).
 */
import {
  goJson,
  goScalar,
  goTool,
  orderedArguments,
  type BoundMessage,
  type RenderFn,
  type Rendered,
  type ThinkSetting,
} from './render-common.js';

const IM_START = '<|im_start|>'; // qwen3coder.go 13
const IM_END = '<|im_end|>'; // qwen3coder.go 14

/** qwen35.go 15-16. */
const XHIGH =
  'Reasoning effort is set to xhigh. Please think carefully through the task, validate key assumptions, consider plausible alternatives, and prioritize correctness, consistency, and clarity in the final answer.';
const LOW =
  'Reasoning effort is set to low. Keep your thinking brief and focused, moving directly to the conclusion without unnecessary elaboration.';

/** qwen35.go 18-42. */
const TOOL_POSTAMBLE = `
</tools>

If you choose to call a function ONLY reply in the following format with NO suffix:

<tool_call>
<function=example_function_name>
<parameter=example_parameter_1>
value_1
</parameter>
<parameter=example_parameter_2>
This is the value for the second parameter
that can span
multiple lines
</parameter>
</function>
</tool_call>

<IMPORTANT>
Reminder:
- Function calls MUST follow the specified format: an inner <function=...></function> block must be nested within <tool_call></tool_call> XML tags
- Required parameters MUST be specified
- You may provide optional reasoning for your function call in natural language BEFORE the function call, but NOT after
- If there is no function call available, answer the question like normal with your current knowledge and do not tell the user about function calls
</IMPORTANT>`;

export const renderQwen35: RenderFn = (messages, tools, think) => render(messages, tools, think, false);
export const renderQwen38: RenderFn = (messages, tools, think) => render(messages, tools, think, true);

function render(original: BoundMessage[], tools: unknown[], think: ThinkSetting, v38: boolean): Rendered {
  // 203-209: Qwen3.8 folds the instructions into one leading system turn; `origin` maps each
  // request message to the message it became.
  const { messages, origin } = v38 ? normalizeQwen38(original) : { messages: original, origin: original.map((_, i) => i) };
  if (v38) validateQwen38(messages); // 210-212, 172-200
  // 216-219: think is always set by the time it gets here (server/routes.go 2616-2620).
  const isThinking = think.on;
  const instructions = v38 ? reasoningInstructions(think) : ''; // 220-227, 113-134
  const first = messages[0];
  const leadingSystem = first !== undefined && first.role === 'system' ? first.content.trim() : undefined;

  let sb = '';
  if (tools.length > 0) {
    // 229-250: the tools come first, the system text after them in the same turn.
    sb += `${IM_START}system\n`;
    if (instructions !== '') sb += `${instructions}\n\n`;
    sb += '# Tools\n\nYou have access to the following functions:\n\n<tools>';
    for (const tool of tools) sb += `\n${marshalWithSpaces(goTool(tool))}`;
    sb += TOOL_POSTAMBLE;
    if (leadingSystem !== undefined && leadingSystem !== '') sb += `\n\n${leadingSystem}`;
    sb += `${IM_END}\n`;
  } else if (leadingSystem !== undefined) {
    // 251-263
    if (!v38 || leadingSystem !== '' || instructions !== '') {
      sb += `${IM_START}system\n`;
      if (instructions !== '') sb += instructions + (leadingSystem !== '' ? '\n\n' : '');
      sb += `${leadingSystem}${IM_END}\n`;
    }
  } else if (instructions !== '') {
    sb += `${IM_START}system\n${instructions}${IM_END}\n`; // 264-266
  }
  const header = sb;

  // 268-281: the last query is the last user message not wrapped in <tool_response>.
  let multiStepTool = true;
  let lastQueryIndex = messages.length - 1;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (multiStepTool && m?.role === 'user' && !isToolResponse(m.content)) {
      multiStepTool = false;
      lastQueryIndex = i;
    }
  }

  const starts: number[] = [];
  messages.forEach((message, i) => {
    starts.push(i === 0 && message.role === 'system' ? 0 : sb.length);
    const content = message.content.trim(); // 287
    const lastMessage = i === messages.length - 1;
    const prefill = lastMessage && message.role === 'assistant'; // 290
    if (message.role === 'user' || (message.role === 'system' && i !== 0)) {
      sb += `${IM_START}${message.role}\n${content}${IM_END}\n`; // 292-296: in place
    } else if (message.role === 'assistant') {
      const thinkBlock = v38 || (isThinking && i > lastQueryIndex); // 298
      const [reasoning, rest] = splitReasoning(content, message.thinking, thinkBlock, !v38); // 299-304
      sb += thinkBlock ? `${IM_START}assistant\n<think>\n${reasoning}\n</think>\n\n${rest}` : `${IM_START}assistant\n${rest}`;
      message.toolCalls.forEach((call, j) => {
        // 312-330
        if (j === 0) {
          if (rest.trim() !== '') sb += '\n\n';
        } else {
          sb += '\n';
        }
        sb += `<tool_call>\n<function=${call.name}>\n`;
        for (const [name, value] of orderedArguments(call.arguments)) sb += `<parameter=${name}>\n${formatArgument(value)}\n</parameter>\n`;
        sb += '</function>\n</tool_call>';
      });
      if (!prefill) sb += `${IM_END}\n`;
    } else if (message.role === 'tool') {
      // 335-342: consecutive tool results share one user turn.
      if (i === 0 || messages[i - 1]?.role !== 'tool') sb += `${IM_START}user`;
      sb += `\n<tool_response>\n${content}\n</tool_response>`;
      if (lastMessage || messages[i + 1]?.role !== 'tool') sb += `${IM_END}\n`;
    } else if (v38 && message.role !== 'system') {
      sb += `${IM_START}${message.role}\n${content}${IM_END}\n`; // 343-346
    }
    if (lastMessage && !prefill) {
      // 348-356: the reply is prefilled.
      sb += `${IM_START}assistant\n`;
      if (isThinking) sb += '<think>\n';
      else sb += '<think>\n\n</think>\n\n'; // emitEmptyThinkOnNoThink (renderer.go 70, qwen35.go 66)
    }
  });
  return { text: sb, header, starts: origin.map((o) => starts[o] ?? header.length) };
}

function isToolResponse(content: string): boolean {
  const c = content.trim();
  return c.startsWith('<tool_response>') && c.endsWith('</tool_response>');
}

/** qwen35.go splitQwen35ReasoningContent (91-111). */
function splitReasoning(content: string, thinking: string, isThinking: boolean, extractTagged: boolean): [string, string] {
  if (isThinking && thinking !== '') return [thinking.trim(), content];
  if (!extractTagged) return ['', content];
  let reasoning = '';
  let rest = content;
  const idx = content.indexOf('</think>');
  if (idx !== -1) {
    const before = content.slice(0, idx);
    const open = before.lastIndexOf('<think>');
    reasoning = open !== -1 ? before.slice(open + '<think>'.length) : before;
    rest = content.slice(idx + '</think>'.length).replace(/^\n+/u, '');
  }
  return [reasoning.trim(), rest];
}

/** qwen3coder.go formatToolCallArgument (199-221): strings raw, maps and slices as JSON, else %v. */
function formatArgument(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return value;
  if (typeof value === 'object') return goJson(value);
  return goScalar(value);
}

/** qwen35.go qwen38ReasoningInstructions (113-134). */
function reasoningInstructions(think: ThinkSetting): string {
  if (!think.on) return '';
  if (think.level === 'low') return LOW;
  if (think.level === 'medium') return '';
  if (think.level === 'high' || think.level === 'max') return XHIGH;
  throw new Error(`unsupported Qwen3.8 reasoning effort "${think.level}"`);
}

/** qwen35.go normalizeQwen38Messages (136-170). */
function normalizeQwen38(messages: BoundMessage[]): { messages: BoundMessage[]; origin: number[] } {
  const isInstruction = (m: BoundMessage): boolean => m.role === 'system' || m.role === 'developer';
  const count = messages.filter(isInstruction).length;
  if (count === 0 || (count === 1 && messages[0]?.role === 'system')) return { messages, origin: messages.map((_, i) => i) };
  const instructions = messages.filter(isInstruction).map((m) => m.content.trim()).filter((c) => c !== '');
  const normalized: BoundMessage[] = [{ role: 'system', content: instructions.join('\n\n'), thinking: '', toolCalls: [] }];
  const origin: number[] = [];
  for (const m of messages) {
    if (isInstruction(m)) {
      origin.push(0);
    } else {
      normalized.push(m);
      origin.push(normalized.length - 1);
    }
  }
  return { messages: normalized, origin };
}

/** qwen35.go validateMessages (172-200): the server answers 500 with this error. */
function validateQwen38(messages: BoundMessage[]): void {
  if (messages.length === 0) throw new Error('no messages provided');
  if (!messages.some((m) => m.role === 'user' && !isToolResponse(m.content))) throw new Error('no user query found in messages');
}

/** model/renderers/json.go marshalWithSpaces (8-48): a space after every `:` and `,` outside strings. */
export function marshalWithSpaces(value: unknown): string {
  return addJsonSpaces(goJson(value));
}

/** json.go addJSONSpaces (16-48); formatGLM47ToolJSON (glm47.go 138-174) is the same walk. */
export function addJsonSpaces(json: string): string {
  let out = '';
  let inString = false;
  let escaped = false;
  for (const c of json) {
    out += c;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === ':' || c === ',') out += ' ';
  }
  return out;
}
