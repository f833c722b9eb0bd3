/**
 * The chat request body navi serialises itself (`chatRequestJson`) is byte for byte what the
 * ollama client would have sent for the same request, and reuses each message's JSON.
 */
import { describe, expect, it } from 'vitest';
import { chatRequestJson, toOllamaRequest } from '../../src/llm/ollama-mapping.js';
import type { ChatMessage, ChatRequest, ToolSchema } from '../../src/llm/types.js';

const signal = new AbortController().signal;

const tool: ToolSchema = {
  type: 'function',
  function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
};

const history: ChatMessage[] = [
  { role: 'system', content: 'You are navi.' },
  { role: 'user', content: 'Fix "the" bug\nin\tsrc/ — ünïcödé, 🚀, \u0000 \u2028 </script>' },
  { role: 'assistant', content: '', thinking: 'never sent back', tool_calls: [{ id: 'c1', name: 'read_file', arguments: { path: 'a.ts' } }] },
  { role: 'tool', content: '1\texport const a = 1;', tool_name: 'read_file' },
  { role: 'assistant', content: '', tool_calls: [{ name: 'shell', arguments: '{"command":"ls"}' }, { name: 'x', arguments: 'not json' }] },
];

function request(over: Partial<ChatRequest> = {}): ChatRequest {
  return { model: 'qwen3:8b', messages: history, think: true, numCtx: 8192, signal, ...over };
}

describe('chatRequestJson', () => {
  it.each<[string, Partial<ChatRequest>]>([
    ['plain', {}],
    ['no messages', { messages: [] }],
    ['tools', { tools: [tool] }],
    ['empty tool list', { tools: [] }],
    ['temperature and keep_alive', { temperature: 0.2, keepAlive: '30m' }],
    ['json format, think off', { format: 'json', think: false }],
    ['odd model name', { model: 'we"ird\\model' }],
  ])('%s: the bytes the client would send', (_name, over) => {
    const req = request(over);
    expect(chatRequestJson(req)).toBe(JSON.stringify({ ...toOllamaRequest(req), stream: true }));
  });

  it('a longer history only appends to the messages of the call before', () => {
    const first = history.slice(0, 3);
    const second = [...first, history[3]!];
    const a = chatRequestJson(request({ messages: first }));
    const b = chatRequestJson(request({ messages: second }));
    const cut = a.indexOf('],"think"');
    expect(b.startsWith(a.slice(0, cut))).toBe(true);
    expect(b).toBe(JSON.stringify({ ...toOllamaRequest(request({ messages: second })), stream: true }));
  });

  it('a message changed in place after it was sent is serialised again', () => {
    const msg: ChatMessage = { role: 'assistant', content: 'partial' };
    chatRequestJson(request({ messages: [msg] }));
    msg.content += ' answer';
    expect(chatRequestJson(request({ messages: [msg] }))).toContain('"content":"partial answer"');
  });
});
