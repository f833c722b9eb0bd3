/**
 * The HTTP layer parses each streamed line once and hands the objects on (issue 17 point 12):
 * no second parse by the `ollama` npm client, which navi no longer depends on. Against the fake
 * over real HTTP.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { newWireState, requestJson, requestStream, type HttpCall } from '../../src/llm/guarded-fetch.js';
import { REPO_ROOT } from '../support/cli.js';
import { fakeOllama } from '../support/fake-ollama-harness.js';

function chat(url: string): HttpCall {
  const body = Buffer.from(JSON.stringify({ model: 'qwen3:8b', messages: [{ role: 'user', content: 'hi' }], think: false, options: { num_ctx: 4096 }, stream: true }));
  return { url: new URL('/api/chat', url), method: 'POST', headers: { 'Content-Type': 'application/json' }, body: { chunks: [body], length: body.length } };
}

async function drain(it: AsyncIterableIterator<Record<string, unknown>>): Promise<{ lines: Record<string, unknown>[]; error: unknown }> {
  const lines: Record<string, unknown>[] = [];
  try {
    for await (const line of it) lines.push(line);
    return { lines, error: undefined };
  } catch (error) {
    return { lines, error };
  }
}

describe('requestStream', () => {
  it('yields each line as a parsed object, the done line last, and records done', async () => {
    const server = await fakeOllama({ turns: [{ content: 'abcdef', chunk_size: 2 }] });
    const state = newWireState();
    const { lines, error } = await drain(await requestStream({ signal: new AbortController().signal, state }, chat(server.url)));
    expect(error).toBeUndefined();
    expect(lines.map((l) => (l.message as { content?: string } | undefined)?.content)).toEqual(['ab', 'cd', 'ef', '']);
    expect(lines.at(-1)).toMatchObject({ done: true, done_reason: 'stop' });
    expect(state).toMatchObject({ gotResponse: true, sawDone: true, bodyEnded: true });
  });

  it('a line that is not JSON ends the stream after the lines before it, and is recorded', async () => {
    const server = await fakeOllama({ turns: [{ content: 'abcdef', chunk_size: 2, garbage: true }] });
    const state = newWireState();
    const { lines, error } = await drain(await requestStream({ signal: new AbortController().signal, state }, chat(server.url)));
    expect(lines).toHaveLength(1);
    expect(error).toBeInstanceOf(Error);
    expect(state.invalidLine).toBe('this is not json');
    expect(state.sawDone).toBe(false);
  });

  it('an error line ends the stream with its text', async () => {
    const server = await fakeOllama({ turns: [{ content: 'abcdef', chunk_size: 2, error_line: 'llama runner process has terminated' }] });
    const state = newWireState();
    const { lines, error } = await drain(await requestStream({ signal: new AbortController().signal, state }, chat(server.url)));
    expect(lines).toHaveLength(1);
    expect((error as Error).message).toBe('llama runner process has terminated');
    expect(state.streamError).toBe('llama runner process has terminated');
  });

  it('stopping early closes the response', async () => {
    const server = await fakeOllama({ turns: [{ content: 'x'.repeat(400), chunk_size: 1, chunk_delay_ms: 20 }] });
    const it = await requestStream({ signal: new AbortController().signal, state: newWireState() }, chat(server.url));
    expect((await it.next()).done).toBe(false);
    await it.return?.();
    expect((await it.next()).done).toBe(true);
    // The fake's own close signal; the timeout is only a hang guard far above the real time.
    const index = server.requests.findIndex((r) => r.path === '/api/chat');
    const record = await server.waitForClose(index, 30_000);
    expect(record.clientClosed).toBe(true);
  });
});

describe('requestJson', () => {
  it('answers a metadata endpoint as parsed JSON', async () => {
    const server = await fakeOllama({ turns: [], version: '0.33.0' });
    const call: HttpCall = { url: new URL('/api/version', server.url), method: 'GET', headers: {} };
    expect(await requestJson({ signal: new AbortController().signal, state: newWireState() }, call)).toEqual({ version: '0.33.0' });
  });
});

describe('no second parser', () => {
  it('navi does not depend on the `ollama` npm client', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    expect(Object.keys(pkg.dependencies ?? {})).not.toContain('ollama');
    const sources = fs.readdirSync(path.join(REPO_ROOT, 'src', 'llm')).filter((f) => f.endsWith('.ts'));
    for (const file of sources) expect(fs.readFileSync(path.join(REPO_ROOT, 'src', 'llm', file), 'utf8')).not.toMatch(/from 'ollama'|import\('ollama'\)/);
  });
});
