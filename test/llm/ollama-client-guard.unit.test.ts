import http from 'node:http';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { LlmUnavailableError, isAbortError } from '../../src/errors.js';
import type { ChatChunk } from '../../src/llm/types.js';
import { fakeOllama } from '../support/fake-ollama-harness.js';
import type { FakeOllama, FakeTurn, RecordedRequest } from '../support/fake-ollama.js';
import { listenOnLoopback } from '../support/ports.js';
import { chatRequest, clientFor, collect, collectUntilError, expectLlmError, MODEL, rejectionOf } from './llm-test-helpers.js';

describe('first-chunk timeout', () => {
  it('covers the wait for headers (silent prefill), aborts the request and names host, model and seconds', async () => {
    // Ten minutes of prefill: only the 0.3 s limit can end this within the hang guard.
    const server = await fakeOllama({ turns: [{ first_chunk_delay_ms: 600_000, content: 'too late' }] });
    const started = Date.now();
    const { chunks, error } = await within(
      collectUntilError(clientFor(server.url, { firstChunkTimeoutS: 0.3 }).chatStream(chatRequest())),
      20_000,
      'the call',
    );
    const elapsed = Date.now() - started;

    expect(chunks).toEqual([]);
    const llmError = expectLlmError(error, 'first_chunk_timeout');
    expect(llmError.message).toBe(
      `no response from Ollama at ${server.url} for model ${MODEL} within 0.3 s (first chunk); ` +
        'raise llm.first_chunk_timeout_s or LLM_STREAM_FIRST_CHUNK_TIMEOUT',
    );
    // A timer never fires early.
    expect(elapsed).toBeGreaterThanOrEqual(280);
    // The server must see the connection go away, or a real GPU would keep prefilling.
    const record = await server.waitForClose(0, 20_000);
    expect(record.clientClosed).toBe(true);
  });

  it('also fires when headers arrive but no line follows', async () => {
    const server = await fakeOllama({ turns: [{ content: 'never sent', stall_after_chunks: 0 }] });
    const error = await rejectionOf(
      collect(clientFor(server.url, { firstChunkTimeoutS: 0.3 }).chatStream(chatRequest())),
    );
    expectLlmError(error, 'first_chunk_timeout');
    expect((await server.waitForClose(0, 20_000)).clientClosed).toBe(true);
  });

  it('applies to chat() as well', async () => {
    const server = await fakeOllama({ turns: [{ first_chunk_delay_ms: 600_000, content: 'too late' }] });
    const error = await rejectionOf(clientFor(server.url, { firstChunkTimeoutS: 0.3 }).chat(chatRequest()));
    expectLlmError(error, 'first_chunk_timeout');
  });

  it('lets a slow prefill through when it answers within the limit', async () => {
    // 0.2 s of prefill against a 10 s limit: a margin no loaded machine eats.
    const server = await fakeOllama({ turns: [{ first_chunk_delay_ms: 200, content: 'made it' }] });
    const result = await clientFor(server.url, { firstChunkTimeoutS: 10 }).chat(chatRequest());
    expect(result.content).toBe('made it');
  });

  it('is off when set to 0', async () => {
    const server = await fakeOllama({ turns: [{ first_chunk_delay_ms: 300, content: 'no limit' }] });
    const result = await clientFor(server.url, { firstChunkTimeoutS: 0, chunkTimeoutS: 0 }).chat(chatRequest());
    expect(result.content).toBe('no limit');
  });
});

describe('inter-chunk timeout', () => {
  it('fires when the stream stalls mid-response, after the chunks that did arrive', async () => {
    const server = await fakeOllama({ turns: [{ content: 'abcdefghijklmnopqrstuvwxyz', chunk_size: 4, stall_after_chunks: 3 }] });
    const { chunks, error } = await within(
      collectUntilError(clientFor(server.url, { chunkTimeoutS: 0.3 }).chatStream(chatRequest())),
      20_000,
      'the call',
    );

    expect(chunks.map((c) => (c.type === 'text' ? c.text : c.type))).toEqual(['abcd', 'efgh', 'ijkl']);
    const llmError = expectLlmError(error, 'chunk_timeout');
    expect(llmError.message).toContain(server.url);
    expect(llmError.message).toContain(MODEL);
    expect(llmError.message).toContain('0.3 s');
    expect(llmError.message).toContain('LLM_STREAM_CHUNK_TIMEOUT');
    expect((await server.waitForClose(0, 20_000)).clientClosed).toBe(true);
  });

  it('restarts for every chunk: a slow but steady stream completes', async () => {
    // 30 chunks 50 ms apart take 1.5 s in all, longer than the 1 s limit; each gap is far below it.
    const content = 'one two three four '.repeat(7).slice(0, 120);
    const server = await fakeOllama({ turns: [{ content, chunk_size: 4, chunk_delay_ms: 50 }] });
    const result = await clientFor(server.url, { chunkTimeoutS: 1 }).chat(chatRequest());
    expect(result.content).toBe(content);
  });

  it('does not count time the consumer spends holding a chunk', async () => {
    const server = await fakeOllama({ turns: [{ content: 'abcdefgh', chunk_size: 4 }] });
    const chunks: ChatChunk[] = [];
    for await (const chunk of clientFor(server.url, { chunkTimeoutS: 0.2 }).chatStream(chatRequest())) {
      chunks.push(chunk);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    expect(chunks.at(-1)?.type).toBe('done');
  });
});

describe('caller abort', () => {
  it('stops a silent prefill, as an AbortError, and closes the connection', async () => {
    // Ten minutes of prefill and a 90 s limit: only the abort can end this within the hang guard.
    // How fast it takes effect (SPEC §12) is an `npm run bench` figure.
    const server = await fakeOllama({ turns: [{ first_chunk_delay_ms: 600_000, content: 'too late' }] });
    const controller = new AbortController();
    const consumed = collectUntilError(clientFor(server.url, { firstChunkTimeoutS: 90 }).chatStream(chatRequest({ signal: controller.signal })));
    // The request has reached the server and sits in "prefill".
    await until(() => server.requests.length === 1, 20_000, 'the request');
    controller.abort();
    const { chunks, error } = await within(consumed, 20_000, 'the aborted call');

    expect(chunks).toEqual([]);
    expect(isAbortError(error)).toBe(true);
    expect((error as Error).name).toBe('AbortError');
    expect(error).not.toBeInstanceOf(LlmUnavailableError);
    const record = await server.waitForClose(0, 20_000);
    expect(record.clientClosed).toBe(true);
  });

  it('stops a running stream', async () => {
    const server = await fakeOllama({ turns: [{ thinking: 'go', endless_thinking: true, chunk_delay_ms: 5 }] });
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
    expect((await server.waitForClose(0, 20_000)).clientClosed).toBe(true);
  });

  it('does not send anything when the signal is already aborted', async () => {
    const server = await fakeOllama({ turns: [{ content: 'unused' }] });
    const client = clientFor(server.url);
    const error = await rejectionOf(client.chat(chatRequest({ signal: AbortSignal.abort() })));
    expect((error as Error).name).toBe('AbortError');
    // A request the same client sends afterwards is answered after anything sent before it
    // would have arrived: the server saw that one only.
    await client.listModels(new AbortController().signal);
    expect(server.requests.map((r) => r.path)).toEqual(['/api/tags']);
  });

  it('stops metadata calls too', async () => {
    const server = await fakeOllama({ turns: [] });
    const error = await rejectionOf(clientFor(server.url).listModels(AbortSignal.abort()));
    expect((error as Error).name).toBe('AbortError');
  });
});

/** Rejects when `work` is not settled after `ms`: a hang guard, never a measurement. */
async function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hang guard: ${what} still pending after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, hang]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits until `condition` holds (polling), or fails after `ms`. */
async function until(condition: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`hang guard: ${what} not seen after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function versionChecks(server: FakeOllama): RecordedRequest[] {
  return server.requests.filter((r) => r.path === '/api/version');
}

function chatRecords(server: FakeOllama): RecordedRequest[] {
  return server.requests.filter((r) => r.path === '/api/chat');
}

const CALL = { name: 'write_file', arguments: { path: 'notes.txt', content: 'a long file' } };

/** Thinking, then the silence of a buffered tool call (SPEC §13), then the call and `done`. */
function silentCallTurn(silentMs: number): FakeTurn {
  return { thinking: 'I will write the file', chunk_size: 100, silent_call_ms: silentMs, tool_calls: [CALL] };
}

const LENIENT_CHUNK = { firstChunk: true, chunk: false };
const LENIENT_FIRST_CHUNK = { firstChunk: false, chunk: true };

describe('lenient silence limits (liveness checks)', () => {
  it('a lenient chunk limit lets a long buffered tool call through, checking /api/version during the silence', async () => {
    const server = await fakeOllama({ turns: [silentCallTurn(1500)] });
    const client = clientFor(server.url, { chunkTimeoutS: 0.3, strict: LENIENT_CHUNK });
    const result = await within(client.chat(chatRequest()), 20_000, 'the call');

    expect(result.thinking).toBe('I will write the file');
    expect(result.toolCalls).toEqual([CALL]);
    expect(result.doneReason).toBe('stop');
    const [chat] = chatRecords(server);
    const checks = versionChecks(server);
    expect(checks.length).toBeGreaterThanOrEqual(1);
    // Asked while the chat request was open, i.e. during its silence (no sleep, only order).
    for (const check of checks) {
      expect(check.method).toBe('GET');
      expect(check.receivedAt).toBeGreaterThanOrEqual(chat?.receivedAt ?? Infinity);
      expect(check.receivedAt).toBeLessThanOrEqual(chat?.closedAt ?? -Infinity);
    }
    expect(chat?.clientClosed).toBe(false);
  });

  it('a lenient first-chunk limit lets a slow prefill through', async () => {
    const server = await fakeOllama({ turns: [{ first_chunk_delay_ms: 1500, content: 'made it' }] });
    const client = clientFor(server.url, { firstChunkTimeoutS: 0.3, strict: LENIENT_FIRST_CHUNK });
    const result = await within(client.chat(chatRequest()), 20_000, 'the call');

    expect(result.content).toBe('made it');
    expect(versionChecks(server).length).toBeGreaterThanOrEqual(1);
  });

  it('the lenient first-chunk limit leaves the chunk limit strict', async () => {
    const server = await fakeOllama({ turns: [silentCallTurn(60_000)] });
    const client = clientFor(server.url, { firstChunkTimeoutS: 0.3, chunkTimeoutS: 0.3, strict: LENIENT_FIRST_CHUNK });
    const error = await within(rejectionOf(client.chat(chatRequest())), 20_000, 'the call');
    expectLlmError(error, 'chunk_timeout');
    expect(versionChecks(server)).toEqual([]);
  });

  it('strict limits (the default) still fail a silent tool call at the chunk limit, without asking /api/version', async () => {
    const server = await fakeOllama({ turns: [silentCallTurn(60_000)] });
    const { chunks, error } = await within(
      collectUntilError(clientFor(server.url, { chunkTimeoutS: 0.3 }).chatStream(chatRequest())),
      20_000,
      'the call',
    );
    expect(chunks).toEqual([{ type: 'thinking', text: 'I will write the file' }]);
    expectLlmError(error, 'chunk_timeout');
    expect(versionChecks(server)).toEqual([]);
    expect((await server.waitForClose(0, 10_000)).clientClosed).toBe(true);
  });

  it('explicitly strict limits fail at the first-chunk limit too', async () => {
    const server = await fakeOllama({ turns: [{ first_chunk_delay_ms: 60_000, content: 'too late' }] });
    const client = clientFor(server.url, { firstChunkTimeoutS: 0.3, strict: { firstChunk: true, chunk: true } });
    const error = await within(rejectionOf(client.chat(chatRequest())), 20_000, 'the call');
    expectLlmError(error, 'first_chunk_timeout');
    expect(versionChecks(server)).toEqual([]);
  });

  it('a dead server mid-silence fails the call (not a hang)', async () => {
    const server = await fakeOllama({ turns: [silentCallTurn(120_000)] });
    const client = clientFor(server.url, { chunkTimeoutS: 0.2, strict: LENIENT_CHUNK });
    const consumed = collectUntilError(client.chatStream(chatRequest()));
    // The fake is in the call's silence once navi has started checking on it.
    await until(() => versionChecks(server).length > 0, 20_000, 'a liveness check');
    await server.close();

    const { chunks, error } = await within(consumed, 20_000, 'the call after the server died');
    expect(chunks).toEqual([{ type: 'thinking', text: 'I will write the file' }]);
    expect(error).toBeInstanceOf(LlmUnavailableError);
    // The dropped stream is seen first, or the next check finds nobody there.
    const { code } = error as LlmUnavailableError;
    expect(['stream_incomplete', 'ollama_unresponsive']).toContain(code);
    expectLlmError(error, code);
  });

  it('call_timeout_s bounds a lenient call that stays silent, and names the setting', async () => {
    // The chunk limit (0.1 s) passes long before the call limit (1.5 s): room for checks under load.
    const server = await fakeOllama({ turns: [silentCallTurn(120_000)] });
    const client = clientFor(server.url, { chunkTimeoutS: 0.1, callTimeoutS: 1.5, strict: LENIENT_CHUNK });
    const { chunks, error } = await within(collectUntilError(client.chatStream(chatRequest())), 20_000, 'the call');

    expect(chunks).toEqual([{ type: 'thinking', text: 'I will write the file' }]);
    const llmError = expectLlmError(error, 'call_timeout');
    expect(llmError.message).toContain('llm.call_timeout_s');
    expect(llmError.message).toContain('within 1.5 s');
    expect(llmError.message).toContain(server.url);
    expect(llmError.message).toContain(MODEL);
    // The liveness checks kept the call going until the overall limit cut it.
    expect(versionChecks(server).length).toBeGreaterThanOrEqual(1);
    expect((await server.waitForClose(0, 10_000)).clientClosed).toBe(true);
  });
});

/**
 * A server whose /api/chat sends headers and one line, then nothing, and whose /api/version
 * fails as `version` says: the process is up but no longer answers.
 */
async function startSilentServer(version: 'destroy' | 'http_500'): Promise<{
  url: string;
  versionRequests: () => number;
  chatClosed: Promise<void>;
  close: () => Promise<void>;
}> {
  let versions = 0;
  let chatClosedResolve: () => void = () => undefined;
  const chatClosed = new Promise<void>((resolve) => {
    chatClosedResolve = resolve;
  });
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    req.resume();
    if (req.url === '/api/version') {
      versions++;
      if (version === 'destroy') req.socket.destroy();
      else {
        res.writeHead(500, { 'Content-Type': 'application/json; charset=utf-8' });
        res.end('{"error":"internal error"}');
      }
      return;
    }
    if (req.url === '/api/chat') {
      res.on('close', () => chatClosedResolve());
      res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
      res.write(`${JSON.stringify({ model: MODEL, created_at: new Date().toISOString(), message: { role: 'assistant', content: '', thinking: 'hm' }, done: false })}\n`);
      return; // silence, socket open
    }
    res.writeHead(404);
    res.end();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const port = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}`,
    versionRequests: () => versions,
    chatClosed,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('lenient limit and a server that stops answering', () => {
  it.each(['destroy', 'http_500'] as const)('fails with ollama_unresponsive when /api/version fails (%s)', async (mode) => {
    const server = await startSilentServer(mode);
    try {
      // No call limit, and every other timer far away: only the failed check can end this.
      const client = clientFor(server.url, { firstChunkTimeoutS: 600, chunkTimeoutS: 0.3, strict: LENIENT_CHUNK });
      const { chunks, error } = await within(collectUntilError(client.chatStream(chatRequest())), 20_000, 'the call');

      expect(chunks).toEqual([{ type: 'thinking', text: 'hm' }]);
      const llmError = expectLlmError(error, 'ollama_unresponsive');
      expect(llmError.message).toContain(server.url);
      expect(llmError.message).toContain(MODEL);
      expect(llmError.message).toContain('/api/version');
      // One check, and its failure ended the call (a failure taken for "alive" would ask again
      // every 0.3 s).
      expect(server.versionRequests()).toBe(1);
      // The silent chat connection is cut, not left open.
      await within(server.chatClosed, 20_000, 'the chat connection to close');
    } finally {
      await server.close();
    }
  });
});
