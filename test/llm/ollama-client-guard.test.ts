import { afterEach, describe, expect, it } from 'vitest';
import { LlmUnavailableError, isAbortError } from '../../src/errors.js';
import type { ChatChunk } from '../../src/llm/types.js';
import { startFakeOllama, type FakeOllama, type FakeScript } from '../support/fake-ollama.js';
import { chatRequest, clientFor, collect, collectUntilError, expectLlmError, MODEL, rejectionOf } from './llm-test-helpers.js';

let fake: FakeOllama | undefined;

async function serve(script: FakeScript): Promise<FakeOllama> {
  fake = await startFakeOllama(script);
  return fake;
}

afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe('first-chunk timeout', () => {
  it('covers the wait for headers (silent prefill), aborts the request and names host, model and seconds', async () => {
    const server = await serve({ turns: [{ first_chunk_delay_ms: 10_000, content: 'too late' }] });
    const started = Date.now();
    const { chunks, error } = await collectUntilError(
      clientFor(server.url, { firstChunkTimeoutS: 0.3 }).chatStream(chatRequest()),
    );
    const elapsed = Date.now() - started;

    expect(chunks).toEqual([]);
    const llmError = expectLlmError(error, 'first_chunk_timeout');
    expect(llmError.message).toBe(
      `no response from Ollama at ${server.url} for model ${MODEL} within 0.3 s (first chunk); ` +
        'raise llm.first_chunk_timeout_s or LLM_STREAM_FIRST_CHUNK_TIMEOUT',
    );
    // Upper bounds far below the server's 10 s, with room for a loaded CI machine.
    expect(elapsed).toBeGreaterThanOrEqual(280);
    expect(elapsed).toBeLessThan(3000);
    // The server must see the connection go away, or a real GPU would keep prefilling.
    const record = await server.waitForClose(0, 3000);
    expect(record.clientClosed).toBe(true);
    expect((record.closedAt ?? Infinity) - started).toBeLessThan(3000);
  });

  it('also fires when headers arrive but no line follows', async () => {
    const server = await serve({ turns: [{ content: 'never sent', stall_after_chunks: 0 }] });
    const error = await rejectionOf(
      collect(clientFor(server.url, { firstChunkTimeoutS: 0.3 }).chatStream(chatRequest())),
    );
    expectLlmError(error, 'first_chunk_timeout');
    expect((await server.waitForClose(0, 1000)).clientClosed).toBe(true);
  });

  it('applies to chat() as well', async () => {
    const server = await serve({ turns: [{ first_chunk_delay_ms: 10_000, content: 'too late' }] });
    const error = await rejectionOf(clientFor(server.url, { firstChunkTimeoutS: 0.3 }).chat(chatRequest()));
    expectLlmError(error, 'first_chunk_timeout');
  });

  it('lets a slow prefill through when it answers within the limit', async () => {
    const server = await serve({ turns: [{ first_chunk_delay_ms: 200, content: 'made it' }] });
    const result = await clientFor(server.url, { firstChunkTimeoutS: 1 }).chat(chatRequest());
    expect(result.content).toBe('made it');
  });

  it('is off when set to 0', async () => {
    const server = await serve({ turns: [{ first_chunk_delay_ms: 300, content: 'no limit' }] });
    const result = await clientFor(server.url, { firstChunkTimeoutS: 0, chunkTimeoutS: 0 }).chat(chatRequest());
    expect(result.content).toBe('no limit');
  });
});

describe('inter-chunk timeout', () => {
  it('fires when the stream stalls mid-response, after the chunks that did arrive', async () => {
    const server = await serve({ turns: [{ content: 'abcdefghijklmnopqrstuvwxyz', chunk_size: 4, stall_after_chunks: 3 }] });
    const started = Date.now();
    const { chunks, error } = await collectUntilError(
      clientFor(server.url, { chunkTimeoutS: 0.3 }).chatStream(chatRequest()),
    );
    const elapsed = Date.now() - started;

    expect(chunks.map((c) => (c.type === 'text' ? c.text : c.type))).toEqual(['abcd', 'efgh', 'ijkl']);
    const llmError = expectLlmError(error, 'chunk_timeout');
    expect(llmError.message).toContain(server.url);
    expect(llmError.message).toContain(MODEL);
    expect(llmError.message).toContain('0.3 s');
    expect(llmError.message).toContain('LLM_STREAM_CHUNK_TIMEOUT');
    expect(elapsed).toBeLessThan(3000);
    expect((await server.waitForClose(0, 3000)).clientClosed).toBe(true);
  });

  it('restarts for every chunk: a slow but steady stream completes', async () => {
    const server = await serve({ turns: [{ content: 'one two three four', chunk_size: 4, chunk_delay_ms: 150 }] });
    const result = await clientFor(server.url, { chunkTimeoutS: 0.3 }).chat(chatRequest());
    expect(result.content).toBe('one two three four');
  });

  it('does not count time the consumer spends holding a chunk', async () => {
    const server = await serve({ turns: [{ content: 'abcdefgh', chunk_size: 4 }] });
    const chunks: ChatChunk[] = [];
    for await (const chunk of clientFor(server.url, { chunkTimeoutS: 0.2 }).chatStream(chatRequest())) {
      chunks.push(chunk);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    expect(chunks.at(-1)?.type).toBe('done');
  });
});

describe('caller abort', () => {
  it('stops a silent prefill within a second, as an AbortError, and closes the connection', async () => {
    const server = await serve({ turns: [{ first_chunk_delay_ms: 30_000, content: 'too late' }] });
    const controller = new AbortController();
    const consumed = collectUntilError(clientFor(server.url, { firstChunkTimeoutS: 90 }).chatStream(chatRequest({ signal: controller.signal })));
    // Let the request reach the server and sit in "prefill".
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(server.requests).toHaveLength(1);
    const abortedAt = performance.now();
    const abortedWall = Date.now();
    controller.abort();
    const { chunks, error } = await consumed;
    const latencyMs = performance.now() - abortedAt;
    process.stderr.write(`stop latency during prefill: ${latencyMs.toFixed(1)} ms\n`);

    expect(chunks).toEqual([]);
    expect(isAbortError(error)).toBe(true);
    expect((error as Error).name).toBe('AbortError');
    expect(error).not.toBeInstanceOf(LlmUnavailableError);
    expect(latencyMs).toBeLessThan(1000);
    const record = await server.waitForClose(0, 1000);
    expect(record.clientClosed).toBe(true);
    expect((record.closedAt ?? Infinity) - abortedWall).toBeLessThan(1000);
  });

  it('stops a running stream', async () => {
    const server = await serve({ turns: [{ thinking: 'go', endless_thinking: true, chunk_delay_ms: 5 }] });
    const controller = new AbortController();
    const seen: ChatChunk[] = [];
    const error = await rejectionOf(
      (async () => {
        for await (const chunk of clientFor(server.url).chatStream(chatRequest({ signal: controller.signal }))) {
          seen.push(chunk);
          if (seen.length === 5) controller.abort();
        }
      })(),
    );
    expect(seen).toHaveLength(5);
    expect((error as Error).name).toBe('AbortError');
    expect((await server.waitForClose(0, 1000)).clientClosed).toBe(true);
  });

  it('does not send anything when the signal is already aborted', async () => {
    const server = await serve({ turns: [{ content: 'unused' }] });
    const error = await rejectionOf(clientFor(server.url).chat(chatRequest({ signal: AbortSignal.abort() })));
    expect((error as Error).name).toBe('AbortError');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.requests).toHaveLength(0);
  });

  it('stops metadata calls too', async () => {
    const server = await serve({ turns: [] });
    const error = await rejectionOf(clientFor(server.url).listModels(AbortSignal.abort()));
    expect((error as Error).name).toBe('AbortError');
  });
});
