/**
 * Translation between navi's `ChatRequest`/`ChatChunk` and the `ollama` client's wire shapes.
 * Pure functions: no I/O, so the adapter stays about transport and timing.
 */
import type { ChatRequest as OllamaChatRequest, Message, ToolCall } from 'ollama';
import { isRecord } from '../util/guards.js';
import type { ChatChunk, ChatMessage, ChatRequest, ToolCallRequest } from './types.js';

/** The streaming request body, exactly what goes over the wire (minus `stream`). */
export function toOllamaRequest(req: ChatRequest): OllamaChatRequest & { truncate: false } {
  const body: OllamaChatRequest & { truncate?: false } = {
    model: req.model,
    messages: req.messages.map(toOllamaMessage),
    think: req.think,
    // num_ctx always: Ollama's default window is small and silently truncates tool schemas.
    options: req.temperature === undefined ? { num_ctx: req.numCtx } : { num_ctx: req.numCtx, temperature: req.temperature },
  };
  if (req.tools !== undefined && req.tools.length > 0) {
    body.tools = req.tools;
  }
  if (req.keepAlive !== undefined) body.keep_alive = req.keepAlive;
  if (req.format !== undefined) body.format = req.format;
  // Ollama's default (true) drops the oldest messages — the task first — with only a debug log
  // when the prompt outgrows the runner's context (server/prompt.go 35-78); refused instead, the
  // prompt comes back as a 400 navi can act on (ContextOverflowError).
  return Object.assign(body, { truncate: false as const });
}

/**
 * Wire shapes already built, per message: the context is sent again on every call and its
 * messages never change once stored (the view truncation relies on the same), so a long
 * history is not re-translated call after call. The content length guards against a caller
 * that appends to a message anyway.
 */
const wireMemo = new WeakMap<ChatMessage, WireEntry>();

interface WireEntry {
  contentLength: number;
  wire: Message;
  /** `JSON.stringify(wire)`, made on the first call that sends it. */
  json?: string;
}

function wireEntry(msg: ChatMessage): WireEntry {
  const hit = wireMemo.get(msg);
  if (hit !== undefined && hit.contentLength === msg.content.length) return hit;
  const entry = { contentLength: msg.content.length, wire: buildOllamaMessage(msg) };
  wireMemo.set(msg, entry);
  return entry;
}

function toOllamaMessage(msg: ChatMessage): Message {
  return wireEntry(msg).wire;
}

/** The message's wire JSON, made once per message (see `wireMemo`). */
export function messageJson(msg: ChatMessage): string {
  const entry = wireEntry(msg);
  entry.json ??= JSON.stringify(entry.wire);
  return entry.json;
}

/**
 * The streaming request body: byte for byte what `JSON.stringify({ ...toOllamaRequest(req),
 * stream: true })` gives, but each message's JSON is made once and reused by every later call.
 * A long history is sent again on every call; serialising all of it anew took time that grew
 * with the history (SPEC §12: the harness gap stays flat).
 */
export function chatRequestJson(req: ChatRequest): string {
  const { head, tail } = chatRequestFrame(req);
  return `${head}${req.messages.map(messageJson).join(',')}${tail}`;
}

/**
 * What a chat request body holds before its first message (`{"model":…,"messages":[`) and after
 * its last one (`],"think":…,"stream":true}`): everything but the messages.
 */
export function chatRequestFrame(req: ChatRequest): { head: string; tail: string } {
  const { model, messages: _none, ...rest } = toOllamaRequest({ ...req, messages: [] });
  // `rest` always holds `think` and `options`, so its JSON is never `{}`.
  return { head: `${JSON.stringify({ model }).slice(0, -1)},"messages":[`, tail: `],${JSON.stringify({ ...rest, stream: true }).slice(1)}` };
}

/**
 * The fields in the order of Ollama's `api.Message` (role, content, thinking, tool_calls,
 * tool_name). An assistant turn goes back with its `thinking`: Ollama's tool-calling docs ask
 * for it, and templates that render reasoning (gpt-oss, qwen3: the turns after the last user
 * message) then see the prompt they generated, so the server's prompt cache still matches.
 */
function buildOllamaMessage(msg: ChatMessage): Message {
  const out: Message = { role: msg.role, content: msg.content };
  if (msg.thinking !== undefined && msg.thinking !== '') out.thinking = msg.thinking;
  if (msg.tool_calls !== undefined && msg.tool_calls.length > 0) {
    out.tool_calls = msg.tool_calls.map(toOllamaToolCall);
  }
  if (msg.tool_name !== undefined) out.tool_name = msg.tool_name;
  return out;
}

/**
 * Ollama rejects a request whose tool-call `arguments` is not an object, so arguments the model
 * sent as broken text are replayed as `{}` (parsed when they happen to be a JSON object). The
 * tool result that follows already tells the model its arguments were invalid.
 */
function toOllamaToolCall(call: ToolCallRequest): ToolCall {
  return { function: { name: call.name, arguments: argumentsObject(call.arguments) } };
}

function argumentsObject(args: unknown): Record<string, unknown> {
  if (isRecord(args)) return args;
  if (typeof args === 'string') {
    try {
      const parsed: unknown = JSON.parse(args);
      if (isRecord(parsed)) return parsed;
    } catch {
      // Not JSON: replay as empty arguments (see above).
    }
  }
  return {};
}

/**
 * Chunks carried by one streamed line, in the order a consumer should see them: thinking, text,
 * tool calls, then `done`. Fields are read defensively because they come from the network.
 */
export function toChatChunks(line: unknown, requestedModel: string): ChatChunk[] {
  if (!isRecord(line)) return [];
  const chunks: ChatChunk[] = [];
  const message = isRecord(line.message) ? line.message : undefined;
  if (message !== undefined) {
    if (typeof message.thinking === 'string' && message.thinking !== '') {
      chunks.push({ type: 'thinking', text: message.thinking });
    }
    if (typeof message.content === 'string' && message.content !== '') {
      chunks.push({ type: 'text', text: message.content });
    }
    const calls = toToolCalls(message.tool_calls);
    if (calls.length > 0) chunks.push({ type: 'tool_calls', calls });
  }
  if (line.done === true) {
    chunks.push({
      type: 'done',
      usage: { promptTokens: count(line.prompt_eval_count), completionTokens: count(line.eval_count) },
      doneReason: typeof line.done_reason === 'string' && line.done_reason !== '' ? line.done_reason : 'stop',
      model: typeof line.model === 'string' && line.model !== '' ? line.model : requestedModel,
    });
  }
  return chunks;
}

/** Arguments are passed through as the server sent them: an object, or a string kept verbatim. */
function toToolCalls(raw: unknown): ToolCallRequest[] {
  if (!Array.isArray(raw)) return [];
  const calls: ToolCallRequest[] = [];
  for (const item of raw as unknown[]) {
    if (!isRecord(item) || !isRecord(item.function)) continue;
    const fn = item.function;
    const call: ToolCallRequest = {
      name: typeof fn.name === 'string' ? fn.name : '',
      arguments: fn.arguments === undefined ? {} : fn.arguments,
    };
    if (typeof item.id === 'string' && item.id !== '') call.id = item.id;
    calls.push(call);
  }
  return calls;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}
