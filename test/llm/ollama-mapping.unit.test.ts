/**
 * The chat request body navi serialises itself (`chatRequestJson`, built from each message's
 * memoised JSON) is byte for byte the plain `JSON.stringify` of the whole request (what the
 * `ollama` npm client sent, before navi stopped using it), and carries Ollama's fields: call ids,
 * `tool_call_id`, thinking of every assistant message, think levels, `num_predict`.
 */
import { describe, expect, it } from 'vitest';
import { chatRequestJson, toOllamaRequest } from '../../src/llm/ollama-mapping.js';
import { ChatBodies } from '../../src/llm/request-body.js';
import type { ChatMessage, ChatRequest, ToolSchema } from '../../src/llm/types.js';

const signal = new AbortController().signal;

const tool: ToolSchema = {
  type: 'function',
  function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
};

const history: ChatMessage[] = [
  { role: 'system', content: 'You are navi.' },
  { role: 'user', content: 'Fix "the" bug\nin\tsrc/ — ünïcödé, 🚀, \u0000 \u2028 </script>' },
  { role: 'assistant', content: '', thinking: 'sent back', tool_calls: [{ id: 'c1', name: 'read_file', arguments: { path: 'a.ts' } }] },
  { role: 'tool', content: '1\texport const a = 1;', tool_name: 'read_file', tool_call_id: 'c1' },
  { role: 'assistant', content: '', tool_calls: [{ name: 'shell', arguments: '{"command":"ls"}' }, { name: 'x', arguments: 'not json' }] },
];

function request(over: Partial<ChatRequest> = {}): ChatRequest {
  return { model: 'qwen3:8b', messages: history, think: true, numCtx: 8192, signal, ...over };
}

/** The plain body: one `JSON.stringify` of the whole request, as the `ollama` client made it. */
function clientBody(req: ChatRequest): string {
  return JSON.stringify({ ...toOllamaRequest(req), stream: true });
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
    ['a think level', { think: 'high' }],
    ['num_predict', { numPredict: 1024, temperature: 0.5 }],
  ])('%s: the bytes of the plain body', (_name, over) => {
    const req = request(over);
    expect(chatRequestJson(req)).toBe(clientBody(req));
  });

  it("sends Ollama's fields: call ids, tool_call_id, every assistant message's thinking, think levels, num_predict", () => {
    const body = JSON.parse(chatRequestJson(request({ think: 'low', numPredict: 2048, temperature: 0.2 }))) as Record<string, unknown>;
    expect(body.think).toBe('low');
    // api/types.go Options: num_predict beside num_ctx.
    expect(body.options).toEqual({ num_ctx: 8192, num_predict: 2048, temperature: 0.2 });
    const messages = body.messages as unknown[];
    // api/types.go 197-230: Message.ToolCallID, ToolCall.ID, in the server's field order.
    expect(JSON.stringify(messages[2])).toBe(
      '{"role":"assistant","content":"","thinking":"sent back","tool_calls":[{"id":"c1","function":{"name":"read_file","arguments":{"path":"a.ts"}}}]}',
    );
    expect(JSON.stringify(messages[3])).toBe('{"role":"tool","content":"1\\texport const a = 1;","tool_name":"read_file","tool_call_id":"c1"}');
    // A call without an id (an older server) goes back without one.
    expect(JSON.stringify(messages[4])).not.toContain('"id"');
  });

  it('think true or false and no num_predict: the body as before', () => {
    const body = JSON.parse(chatRequestJson(request({ think: false }))) as Record<string, unknown>;
    expect(body.think).toBe(false);
    expect(body.options).toEqual({ num_ctx: 8192 });
  });

  it('a longer history only appends to the messages of the call before', () => {
    const first = history.slice(0, 3);
    const second = [...first, history[3]!];
    const a = chatRequestJson(request({ messages: first }));
    const b = chatRequestJson(request({ messages: second }));
    const cut = a.indexOf('],"think"');
    expect(b.startsWith(a.slice(0, cut))).toBe(true);
    expect(b).toBe(clientBody(request({ messages: second })));
  });

  it('a message changed in place after it was sent is serialised again', () => {
    const msg: ChatMessage = { role: 'assistant', content: 'partial' };
    chatRequestJson(request({ messages: [msg] }));
    // Against the type (ChatMessage is read-only): the caches still notice.
    (msg as { content: string }).content += ' answer';
    expect(chatRequestJson(request({ messages: [msg] }))).toContain('"content":"partial answer"');
  });
});

describe('ChatBodies', () => {
  const sys = (text: string): ChatMessage => ({ role: 'system', content: text });
  const pair = (i: number): ChatMessage[] => [
    { role: 'assistant', content: '', tool_calls: [{ id: `c${i}`, name: 'read_file', arguments: { path: `f${i}.ts` } }] },
    { role: 'tool', content: `line ${i}\tü "quoted"`, tool_name: 'read_file' },
  ];
  const transient = (i: number): ChatMessage => ({ role: 'user', content: `[Iteration ${i} of 50]` });

  function check(bodies: ChatBodies, req: ChatRequest): Buffer[] {
    const parts = bodies.build(req);
    const bytes = Buffer.concat(parts.chunks);
    expect(bytes.length).toBe(parts.length);
    expect(bytes.toString()).toBe(chatRequestJson(req));
    return parts.chunks;
  }

  it('a growing tool loop: every body is exact, and the pieces stay few', () => {
    const bodies = new ChatBodies();
    const context: ChatMessage[] = [{ role: 'user', content: 'audit src/' }];
    for (let i = 0; i < 40; i++) {
      // The system message is rebuilt for every request; transient messages come last.
      const chunks = check(bodies, request({ messages: [sys('You are navi.'), ...context, transient(i)], tools: [tool] }));
      expect(chunks.length).toBeLessThanOrEqual(2 + Math.ceil(Math.log2(Buffer.concat(chunks).length)));
      context.push(...pair(i));
    }
  });

  it.each<[string, (context: ChatMessage[]) => void]>([
    ['compression replaced the history', (c) => c.splice(0, c.length, { role: 'user', content: 'Summary so far.' })],
    ['a message changed in place (against the read-only type)', (c) => ((c[1] as { content: string }).content += ' (edited)')],
    ['a message dropped from the middle', (c) => c.splice(2, 1)],
    ['nothing new', () => undefined],
  ])('%s: the next body is still exact', (_name, change) => {
    const bodies = new ChatBodies();
    const context: ChatMessage[] = [{ role: 'user', content: 'audit src/' }, ...pair(1), ...pair(2)];
    check(bodies, request({ messages: [sys('You are navi.'), ...context] }));
    check(bodies, request({ messages: [sys('You are navi.'), ...context, transient(1)] }));
    change(context);
    check(bodies, request({ messages: [sys('You are navi.'), ...context, transient(2)] }));
  });

  it('a rebuilt tool result that answers another call is sent anew', () => {
    const bodies = new ChatBodies();
    const result = (id: string): ChatMessage => ({ role: 'tool', content: 'same', tool_name: 'read_file', tool_call_id: id });
    check(bodies, request({ messages: [sys('You are navi.'), result('call_a')] }));
    const parts = check(bodies, request({ messages: [sys('You are navi.'), result('call_b')], numPredict: 99 }));
    expect(Buffer.concat(parts).toString()).toContain('"tool_call_id":"call_b"');
  });

  it('agents taking turns (more than it remembers), a profile switch, other settings', () => {
    const bodies = new ChatBodies();
    const contexts = Array.from({ length: 6 }, (_, a) => [{ role: 'user', content: `task ${a}` }] as ChatMessage[]);
    for (let round = 0; round < 5; round++) {
      for (const [a, context] of contexts.entries()) {
        const prompt = round === 3 && a === 0 ? 'You are the researcher.' : `You are agent ${a}.`;
        check(
          bodies,
          request({ messages: [sys(prompt), ...context], temperature: round / 10, format: round === 2 ? 'json' : undefined, tools: a % 2 === 0 ? [tool] : undefined }),
        );
        context.push(...pair(round));
      }
    }
  });
});
