import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOllama, type FakeOllama, type FakeScript } from '../support/fake-ollama.js';

let fake: FakeOllama | undefined;

async function serve(script: FakeScript): Promise<FakeOllama> {
  fake = await startFakeOllama(script);
  return fake;
}

afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function post(url: string, body: unknown): Promise<{ status: number; contentType: string; text: string }> {
  const response = await fetch(url, { method: 'POST', body: JSON.stringify(body) });
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    text: await response.text(),
  };
}

function lines(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('fake Ollama wire format', () => {
  it('streams NDJSON like Ollama: message chunks, tool calls in one chunk, a final done line', async () => {
    const server = await serve({
      turns: [{ thinking: 'hm', content: 'hi', tool_calls: [{ name: 'shell', arguments: { command: 'ls' } }], eval_count: 9 }],
    });
    const res = await post(`${server.url}/api/chat`, { model: 'qwen3:8b', messages: [] });
    expect(res.contentType).toBe('application/x-ndjson');
    const parsed = lines(res.text);
    expect(parsed.map((l) => l.message)).toEqual([
      { role: 'assistant', content: '', thinking: 'hm' },
      { role: 'assistant', content: 'hi' },
      { role: 'assistant', content: '', tool_calls: [{ function: { index: 0, name: 'shell', arguments: { command: 'ls' } } }] },
      { role: 'assistant', content: '' },
    ]);
    expect(parsed.slice(0, -1).every((l) => l.done === false && l.model === 'qwen3:8b')).toBe(true);
    expect(parsed.at(-1)).toMatchObject({
      done: true,
      done_reason: 'stop',
      eval_count: 9,
      prompt_eval_count: Math.ceil((server.requests[0]?.bytes ?? 0) / 4),
    });
    for (const key of ['created_at', 'total_duration', 'load_duration', 'prompt_eval_duration', 'eval_duration']) {
      expect(parsed.at(-1)).toHaveProperty(key);
    }
  });

  it('answers stream:false with one JSON object', async () => {
    const server = await serve({ turns: [{ content: 'whole answer', thinking: 't' }] });
    const res = await post(`${server.url}/api/chat`, { model: 'qwen3:8b', messages: [], stream: false });
    const body = JSON.parse(res.text) as Record<string, unknown>;
    expect(body).toMatchObject({ message: { role: 'assistant', content: 'whole answer', thinking: 't' }, done: true });
  });

  it('answers 404 like Ollama for an unknown model on /api/chat and /api/show', async () => {
    const server = await serve({ turns: [{ content: 'x' }] });
    for (const path of ['/api/chat', '/api/show']) {
      const res = await post(`${server.url}${path}`, { model: 'nope:1b', messages: [] });
      expect(res.status).toBe(404);
      expect(JSON.parse(res.text)).toEqual({ error: "model 'nope:1b' not found" });
    }
    expect(server.turnsServed).toBe(0);
  });

  it('accepts a name without tag for a :latest model', async () => {
    const server = await serve({ models: [{ name: 'llama3:latest' }], turns: [] });
    const res = await post(`${server.url}/api/show`, { model: 'llama3' });
    expect(res.status).toBe(200);
  });

  it('serves /api/tags, /api/version and an arch-prefixed context length on /api/show', async () => {
    const server = await serve({ models: [{ name: 'gemma3:4b', context_length: 131072 }], turns: [], version: '0.11.4' });
    const tags = (await (await fetch(`${server.url}/api/tags`)).json()) as { models: Array<{ name: string }> };
    expect(tags.models.map((m) => m.name)).toEqual(['gemma3:4b']);
    expect(await (await fetch(`${server.url}/api/version`)).json()).toEqual({ version: '0.11.4' });
    const show = JSON.parse((await post(`${server.url}/api/show`, { model: 'gemma3:4b' })).text) as Record<string, unknown>;
    expect(show.model_info).toEqual({ 'general.architecture': 'gemma3', 'gemma3.context_length': 131072 });
    expect(show.capabilities).toEqual(['completion', 'tools', 'thinking']);
  });
});

describe('fake Ollama script control', () => {
  it('plays turns in order, then "done.", and can be swapped at runtime', async () => {
    const server = await serve({ turns: [{ content: 'one' }] });
    const contentOf = async (): Promise<string> => {
      const res = await post(`${server.url}/api/chat`, { model: 'qwen3:8b', messages: [], stream: false });
      return (JSON.parse(res.text) as { message: { content: string } }).message.content;
    };
    expect(await contentOf()).toBe('one');
    expect(await contentOf()).toBe('done.');
    expect(server.turnsServed).toBe(1);
    server.setScript({ turns: [{ content: 'two' }, { content: 'three' }] });
    expect(server.turnsServed).toBe(0);
    expect(await contentOf()).toBe('two');
    expect(await contentOf()).toBe('three');
    expect(server.turnsServed).toBe(2);
    expect(server.requests.map((r) => r.turn)).toEqual([0, 1, 0, 1]);
  });

  it('records tool mismatches for expect_tools', async () => {
    const server = await serve({ turns: [{ content: 'x', expect_tools: ['read_file', 'shell'] }] });
    await post(`${server.url}/api/chat`, {
      model: 'qwen3:8b',
      messages: [],
      stream: false,
      tools: [{ type: 'function', function: { name: 'read_file' } }],
    });
    expect(server.mismatches).toEqual(['turn 0: expected tools [read_file, shell], got [read_file]']);
  });

  it('closes promptly even with a stalled stream open', async () => {
    const server = await serve({ turns: [{ content: 'abcdefgh', chunk_size: 2, stall_after_chunks: 1 }] });
    const firstBytes = new Promise<void>((resolve, reject) => {
      const req = request(`${server.url}/api/chat`, { method: 'POST' }, (res) => {
        res.once('data', () => resolve());
        res.on('error', () => undefined);
      });
      req.on('error', reject);
      req.end(JSON.stringify({ model: 'qwen3:8b', messages: [] }));
    });
    await firstBytes;
    const started = Date.now();
    await server.close();
    expect(Date.now() - started).toBeLessThan(500);
    expect(server.requests[0]?.clientClosed).toBe(true);
    fake = undefined;
  });
});

describe('fake Ollama standalone entry', () => {
  it('prints its url first, serves the script, and exits cleanly on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fake-ollama-'));
    const scriptPath = join(dir, 'script.json');
    writeFileSync(scriptPath, JSON.stringify({ turns: [{ content: 'from the cli' }], version: '9.9.9' }));
    const child = spawn('./node_modules/.bin/tsx', ['test/support/fake-ollama-cli.ts', scriptPath], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const [firstLine] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
      const { url } = JSON.parse(firstLine) as { url: string };
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(await (await fetch(`${url}/api/version`)).json()).toEqual({ version: '9.9.9' });
      const res = await post(`${url}/api/chat`, { model: 'qwen3:8b', messages: [], stream: false });
      expect((JSON.parse(res.text) as { message: { content: string } }).message.content).toBe('from the cli');
    } finally {
      child.kill('SIGTERM');
    }
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
  });
});
