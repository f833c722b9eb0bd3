/**
 * Ollama's Go renderer for GLM-4.7 (model/renderers/glm47.go at fb3076099; renderer.go 106-107,
 * "glm-4.7"): a template that keeps thinking. "Thinking is PRESERVED by default" (34-38): every
 * assistant turn's thinking is rendered in <think>…</think>, wherever it stands, and a turn
 * without thinking is rendered as `</think>` (77-82) — so a client that drops thinking from an
 * earlier turn changes that turn's render. No collate (server/prompt.go 135-143): system
 * messages are rendered in place (100-102), content is not trimmed.
 */
import { goJson, goTool, orderedArguments, type RenderFn } from './render-common.js';
import { addJsonSpaces } from './render-qwen35.js';

export const renderGlm47: RenderFn = (messages, tools, think) => {
  let sb = '[gMASK]<sop>'; // 48
  if (tools.length > 0) {
    // 50-64
    sb += '<|system|>\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n';
    sb += 'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n';
    // formatGLM47ToolJSON (138-174) adds the same spaces as json.go addJSONSpaces.
    for (const tool of tools) sb += `${addJsonSpaces(goJson(goTool(tool)))}\n`;
    sb += '</tools>\n\n';
    sb += 'For each function call, output the function name and arguments within the following XML format:\n';
    sb +=
      '<tool_call>{function-name}<arg_key>{arg-key-1}</arg_key><arg_value>{arg-value-1}</arg_value><arg_key>{arg-key-2}</arg_key><arg_value>{arg-value-2}</arg_value>...</tool_call>';
  }
  const header = sb;
  // 66-69: thinking is on unless think is false.
  const thinkOn = think.on;

  const starts: number[] = [];
  messages.forEach((message, i) => {
    starts.push(sb.length);
    switch (message.role) {
      case 'user':
        sb += `<|user|>${message.content}`; // 73-75
        break;
      case 'assistant':
        // 76-92: every turn's thinking, or `</think>` for a turn without it.
        sb += '<|assistant|>';
        sb += message.thinking !== '' ? `<think>${message.thinking}</think>` : '</think>';
        sb += message.content;
        for (const call of message.toolCalls) sb += `<tool_call>${call.name}${renderArguments(call.arguments)}</tool_call>`;
        break;
      case 'tool':
        // 93-99: consecutive results share one <|observation|>.
        if (i === 0 || messages[i - 1]?.role !== 'tool') sb += '<|observation|>';
        sb += `<tool_response>${message.content}</tool_response>`;
        break;
      case 'system':
        sb += `<|system|>${message.content}`; // 100-102: in place
        break;
      default:
        break;
    }
  });
  // 106-111: always opens a reply, whatever the last message was.
  sb += thinkOn ? '<|assistant|><think>' : '<|assistant|></think>';
  return { text: sb, header, starts };
};

/** glm47.go renderGLM47ToolArguments (116-136): strings raw, anything else as JSON. */
function renderArguments(args: unknown): string {
  let out = '';
  for (const [key, value] of orderedArguments(args)) out += `<arg_key>${key}</arg_key><arg_value>${typeof value === 'string' ? value : goJson(value)}</arg_value>`;
  return out;
}
