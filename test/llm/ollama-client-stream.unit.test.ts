import { describe, expect, it } from 'vitest';
import { InvalidInputError, LlmUnavailableError } from '../../src/errors.js';
import type { ChatChunk } from '../../src/llm/types.js';
import { costGrowth } from '../support/cost-growth.js';
import { fakeOllama } from '../support/fake-ollama-harness.js';
import type { FakeScript } from '../support/fake-ollama.js';
import { MODEL, chatRequest, clientFor, collect, rejectionOf, textOf } from './llm-test-helpers.js';

describe('chatStream', () => {
  it('streams thinking, then text, then tool calls, then done, in order', async () => {
    const server = await fakeOllama({
      turns: [
        {
          thinking: 'The user wants a file read.',
          content: 'Reading it now.',
          tool_calls: [{ name: 'read_file', arguments: { path: 'README.md' } }],
          chunk_size: 5,
        },
      ],
    });
    const chunks = await collect(clientFor(server.url).chatStream(chatRequest()));

    expect(textOf(chunks, 'thinking')).toBe('The user wants a file read.');
    expect(textOf(chunks, 'text')).toBe('Reading it now.');
    expect(chunks.filter((c) => c.type === 'thinking').length).toBeGreaterThan(1);
    const kinds = chunks.map((c) => c.type);
    expect(kinds.lastIndexOf('thinking')).toBeLessThan(kinds.indexOf('text'));
    expect(kinds.slice(-2)).toEqual(['tool_calls', 'done']);
    expect(chunks.at(-2)).toEqual({ type: 'tool_calls', calls: [{ name: 'read_file', arguments: { path: 'README.md' } }] });
  });

  it('reports the real prompt_eval_count and eval_count, done_reason and model', async () => {
    const server = await fakeOllama({ turns: [{ content: 'ok', prompt_eval_count: 1234, eval_count: 56, done_reason: 'length' }] });
    const chunks = await collect(clientFor(server.url).chatStream(chatRequest()));
    expect(chunks.at(-1)).toEqual({
      type: 'done',
      usage: { promptTokens: 1234, completionTokens: 56 },
      doneReason: 'length',
      model: MODEL,
    });
  });

  it('passes the default counts through (prompt tokens follow the request size)', async () => {
    const server = await fakeOllama({ turns: [{ content: 'twelve chars' }] });
    const chunks = await collect(clientFor(server.url).chatStream(chatRequest()));
    const done = chunks.at(-1);
    expect(done?.type).toBe('done');
    if (done?.type !== 'done') return;
    expect(done.usage.promptTokens).toBe(Math.ceil((server.requests[0]?.bytes ?? 0) / 4));
    expect(done.usage.completionTokens).toBe(3);
  });

  it('keeps tool-call arguments that arrive as a string verbatim, with ids when sent', async () => {
    const server = await fakeOllama({
      turns: [
        {
          tool_calls: [
            { name: 'write_file', arguments: '{"path": "a.txt", "content": ', id: 'call_7' },
            { name: 'list_dir', arguments: {} },
          ],
        },
      ],
    });
    const chunks = await collect(clientFor(server.url).chatStream(chatRequest()));
    const calls = chunks.find((c): c is Extract<ChatChunk, { type: 'tool_calls' }> => c.type === 'tool_calls')?.calls;
    expect(calls).toEqual([
      { id: 'call_7', name: 'write_file', arguments: '{"path": "a.txt", "content": ' },
      { name: 'list_dir', arguments: {} },
    ]);
  });

  it('sends num_ctx, temperature, keep_alive, think, tools and format, and the assistant thinking back', async () => {
    const server = await fakeOllama({ turns: [{ content: 'ok' }] });
    const tool = {
      type: 'function' as const,
      function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: {} } },
    };
    await collect(
      clientFor(server.url).chatStream(
        chatRequest({
          messages: [
            { role: 'system', content: 'be brief' },
            { role: 'user', content: 'read a.txt' },
            {
              role: 'assistant',
              content: '',
              thinking: 'secret reasoning',
              tool_calls: [
                { name: 'read_file', arguments: { path: 'a.txt' } },
                { name: 'write_file', arguments: 'not json {' },
                { name: 'list_dir', arguments: '{"path": "src"}' },
              ],
            },
            { role: 'tool', content: 'contents', tool_name: 'read_file' },
          ],
          tools: [tool],
          think: false,
          numCtx: 65536,
          temperature: 0.2,
          keepAlive: '30m',
          format: 'json',
        }),
      ),
    );
    const body = server.requests[0]?.body;
    expect(server.requests[0]?.path).toBe('/api/chat');
    expect(body).toMatchObject({
      model: MODEL,
      stream: true,
      think: false,
      options: { num_ctx: 65536, temperature: 0.2 },
      keep_alive: '30m',
      format: 'json',
      tools: [tool],
    });
    expect(body?.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'read a.txt' },
      {
        role: 'assistant',
        content: '',
        // Ollama's docs ask for it; gpt-oss and qwen3 render it for the turns after the last user message.
        thinking: 'secret reasoning',
        tool_calls: [
          { function: { name: 'read_file', arguments: { path: 'a.txt' } } },
          // Ollama rejects non-object arguments, so broken ones are replayed as {}.
          { function: { name: 'write_file', arguments: {} } },
          { function: { name: 'list_dir', arguments: { path: 'src' } } },
        ],
      },
      { role: 'tool', content: 'contents', tool_name: 'read_file' },
    ]);
  });

  it('always sends num_ctx and omits what was not asked for', async () => {
    const server = await fakeOllama({ turns: [{ content: 'ok' }] });
    await collect(clientFor(server.url).chatStream(chatRequest({ numCtx: 4096 })));
    const body = server.requests[0]?.body ?? {};
    expect(body.options).toEqual({ num_ctx: 4096 });
    expect(body.think).toBe(true);
    expect('keep_alive' in body).toBe(false);
    expect('tools' in body).toBe(false);
    expect('format' in body).toBe(false);
  });

  it('closes the HTTP stream when the consumer stops early', async () => {
    const server = await fakeOllama({ turns: [{ thinking: 'start', endless_thinking: true, chunk_delay_ms: 5 }] });
    let seen = 0;
    for await (const chunk of clientFor(server.url).chatStream(chatRequest())) {
      expect(chunk.type).toBe('thinking');
      if (++seen === 3) break;
    }
    const record = await server.waitForClose(0, 20_000);
    expect(record.clientClosed).toBe(true);
  });

  it('serves several calls over one client, one turn each', async () => {
    const server = await fakeOllama({ turns: [{ content: 'first' }, { content: 'second' }] });
    const llm = clientFor(server.url);
    expect(textOf(await collect(llm.chatStream(chatRequest())), 'text')).toBe('first');
    expect(textOf(await collect(llm.chatStream(chatRequest())), 'text')).toBe('second');
    expect(server.turnsServed).toBe(2);
  });

  it('reads one long line at a cost linear in its length (one 8 MB line costs about what 16 of 0.5 MB do)', async () => {
    const turn = (bytes: number): FakeScript['turns'][number] => ({
      tool_calls: [{ name: 'write_file', arguments: { path: 'big.txt', content: 'x'.repeat(bytes) } }],
    });
    const server = await fakeOllama({ turns: [] });
    const llm = clientFor(server.url);
    // CPU time of this process: the client's reading and the in-process fake's writing, both
    // linear. The same bytes in one line or in 16: linear ~1 (less: 16 requests cost more), quadratic 16×.
    const growth = await costGrowth(
      async (bytes) => {
        server.setScript({ turns: [turn(bytes)] });
        const result = await llm.chat(chatRequest());
        expect((result.toolCalls[0]?.arguments as { content: string }).content).toHaveLength(bytes);
      },
      1 << 19,
      8 << 20,
      { runs: 3 },
    );
    expect(growth.ratio, growth.text).toBeLessThan(4);
  });
});

describe('chat (collected)', () => {
  it('collects text, thinking, tool calls and usage into one result', async () => {
    const server = await fakeOllama({
      turns: [
        {
          thinking: 'hmm',
          content: '{"answer": 42}',
          tool_calls: [{ name: 'plan', arguments: { reason: 'start' } }],
          prompt_eval_count: 100,
          eval_count: 7,
        },
      ],
    });
    const result = await clientFor(server.url).chat(chatRequest({ think: false, format: 'json' }));
    expect(result).toEqual({
      content: '{"answer": 42}',
      thinking: 'hmm',
      toolCalls: [{ name: 'plan', arguments: { reason: 'start' } }],
      usage: { promptTokens: 100, completionTokens: 7 },
      doneReason: 'stop',
      model: MODEL,
    });
  });

  it('fails like the stream does', async () => {
    const server = await fakeOllama({ turns: [{ content: 'cut short', drop_after_chunks: 1 }] });
    const error = await rejectionOf(clientFor(server.url).chat(chatRequest()));
    expect(error).toBeInstanceOf(LlmUnavailableError);
    expect((error as LlmUnavailableError).code).toBe('stream_incomplete');
  });
});

describe('model metadata', () => {
  it('reads the context length and capabilities from /api/show', async () => {
    const server = await fakeOllama({
      models: [{ name: 'qwen3:8b', context_length: 40960 }, { name: 'tiny:1b', capabilities: ['completion'] }],
      turns: [],
    });
    const llm = clientFor(server.url);
    expect(await llm.showModel('qwen3:8b')).toEqual({
      name: 'qwen3:8b',
      contextLength: 40960,
      capabilities: ['completion', 'tools', 'thinking'],
      family: 'qwen3',
    });
    expect(await llm.showModel('tiny:1b')).toEqual({ name: 'tiny:1b', capabilities: ['completion'], family: 'tiny' });
  });

  it('lists pulled models and the server version', async () => {
    const server = await fakeOllama({ models: [{ name: 'a:1b' }, { name: 'b:7b' }], turns: [], version: '0.9.9' });
    const llm = clientFor(server.url);
    expect(await llm.listModels()).toEqual(['a:1b', 'b:7b']);
    expect(await llm.version()).toBe('0.9.9');
  });

  it('says how to pull a model /api/show does not know', async () => {
    const server = await fakeOllama({ turns: [] });
    const error = await rejectionOf(clientFor(server.url).showModel('llama9:70b'));
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).code).toBe('model_not_found');
    expect((error as Error).message).toBe(`model 'llama9:70b' is not pulled on ${server.url}; run: ollama pull llama9:70b (or choose another with --model or llm.model)`);
  });
});
