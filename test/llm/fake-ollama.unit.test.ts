import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { goJsonSyntaxError, parseGoDuration } from '../support/fake-ollama-script.js';
import { fakeOllama } from '../support/fake-ollama-harness.js';

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
    const server = await fakeOllama({
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
    const server = await fakeOllama({ turns: [{ content: 'whole answer', thinking: 't' }] });
    const res = await post(`${server.url}/api/chat`, { model: 'qwen3:8b', messages: [], stream: false });
    const body = JSON.parse(res.text) as Record<string, unknown>;
    expect(body).toMatchObject({ message: { role: 'assistant', content: 'whole answer', thinking: 't' }, done: true });
  });

  it('answers 404 like Ollama for an unknown model on /api/chat and /api/show', async () => {
    const server = await fakeOllama({ turns: [{ content: 'x' }] });
    for (const path of ['/api/chat', '/api/show']) {
      const res = await post(`${server.url}${path}`, { model: 'nope:1b', messages: [] });
      expect(res.status).toBe(404);
      expect(JSON.parse(res.text)).toEqual({ error: "model 'nope:1b' not found" });
    }
    expect(server.turnsServed).toBe(0);
  });

  it('accepts a name without tag for a :latest model', async () => {
    const server = await fakeOllama({ models: [{ name: 'llama3:latest' }], turns: [] });
    const res = await post(`${server.url}/api/show`, { model: 'llama3' });
    expect(res.status).toBe(200);
  });

  it('serves /api/tags, /api/version and an arch-prefixed context length on /api/show', async () => {
    const server = await fakeOllama({ models: [{ name: 'gemma3:4b', context_length: 131072 }], turns: [], version: '0.11.4' });
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
    const server = await fakeOllama({ turns: [{ content: 'one' }] });
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
    const server = await fakeOllama({ turns: [{ content: 'x', expect_tools: ['read_file', 'shell'] }] });
    await post(`${server.url}/api/chat`, {
      model: 'qwen3:8b',
      messages: [],
      stream: false,
      tools: [{ type: 'function', function: { name: 'read_file' } }],
    });
    expect(server.mismatches).toEqual(['turn 0: expected tools [read_file, shell], got [read_file]']);
  });

  it('closes promptly even with a stalled stream open', async () => {
    const server = await fakeOllama({ turns: [{ content: 'abcdefgh', chunk_size: 2, stall_after_chunks: 1 }] });
    const firstBytes = new Promise<void>((resolve, reject) => {
      const req = request(`${server.url}/api/chat`, { method: 'POST' }, (res) => {
        res.once('data', () => resolve());
        res.on('error', () => undefined);
      });
      req.on('error', reject);
      req.end(JSON.stringify({ model: 'qwen3:8b', messages: [] }));
    });
    await firstBytes;
    // The stream stays stalled forever: close() returning at all shows it did not wait for it.
    await server.close();
    expect(server.requests[0]?.clientClosed).toBe(true);
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

/** Streams a chat request, recording when each piece of the body arrived. */
async function streamTimed(
  url: string,
  body: unknown,
): Promise<{ status: number; contentType: string; pieces: Array<{ at: number; text: string }> }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/api/chat`, { method: 'POST' }, (res) => {
      const pieces: Array<{ at: number; text: string }> = [];
      res.setEncoding('utf8');
      res.on('data', (text: string) => pieces.push({ at: Date.now(), text }));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'] ?? '', pieces }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const CHAT = { model: 'qwen3:8b', messages: [{ role: 'user', content: 'hi' }] };

describe('fake Ollama request checks (server/routes.go ChatHandler)', () => {
  const models = [
    { name: 'qwen3:8b' },
    { name: 'llama3.1:8b', capabilities: ['completion', 'tools'] },
    { name: 'gemma2:latest', capabilities: ['completion'] },
    { name: 'bert:latest', capabilities: ['embedding'] },
  ];

  it.each([
    ['think true, no thinking', { model: 'llama3.1:8b', think: true }, 400, '"llama3.1:8b" does not support thinking'],
    ['think "high", no thinking', { model: 'llama3.1:8b', think: 'high' }, 400, '"llama3.1:8b" does not support thinking'],
    ['tools, no tools (full name)', { model: 'gemma2', tools: [{ type: 'function', function: { name: 'x' } }] }, 400, 'registry.ollama.ai/library/gemma2:latest does not support tools'],
    ['no completion', { model: 'bert' }, 400, '"bert" does not support chat'],
    ['bad think level', { model: 'qwen3:8b', think: 'extreme' }, 400, 'invalid think value: "extreme" (must be "high", "medium", "low", "max", true, or false)'],
    ['think of another type', { model: 'qwen3:8b', think: 1 }, 400, 'think must be a boolean or string ("high", "medium", "low", "max", true, or false)'],
    ['no model', { model: '' }, 400, 'model is required'],
  ])('%s → %i', async (_name, fields, status, error) => {
    const server = await fakeOllama({ models, turns: [{ content: 'x' }] });
    const res = await post(`${server.url}/api/chat`, { ...CHAT, ...fields });
    expect(res.status).toBe(status);
    expect(res.contentType).toBe('application/json; charset=utf-8');
    expect(JSON.parse(res.text)).toEqual({ error });
    expect(server.turnsServed).toBe(0);
  });

  it.each([
    ['think false on a model without thinking', { model: 'llama3.1:8b', think: false }],
    ['no tools key on a model without tools', { model: 'gemma2' }],
    ['an empty tools list on a model without tools', { model: 'gemma2', tools: [] }],
    ['a thinking level on a thinking model', { model: 'qwen3:8b', think: 'low' }],
    // api/types.go 1126-1229: "max" is a level too (v0.22.0); harmony maps it to "high".
    ['think "max"', { model: 'qwen3:8b', think: 'max' }],
    // api/types.go 197-230: Message.ToolCallID, ToolCall.ID (since v0.12.10); num_predict is an option.
    [
      'call ids, tool_call_id and num_predict',
      {
        model: 'qwen3:8b',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: '', thinking: 't', tool_calls: [{ id: 'call_ab12cd34', function: { name: 'shell', arguments: { command: 'ls' } } }] },
          { role: 'tool', content: 'a.txt', tool_name: 'shell', tool_call_id: 'call_ab12cd34' },
        ],
        options: { num_ctx: 4096, num_predict: 512 },
      },
    ],
  ])('accepts %s', async (_name, fields) => {
    const server = await fakeOllama({ models, turns: [{ content: 'x' }] });
    const res = await post(`${server.url}/api/chat`, { ...CHAT, ...fields });
    expect(res.status).toBe(200);
    expect(lines(res.text).at(-1)).toMatchObject({ done: true });
    expect(server.turnsServed).toBe(1);
  });

  it.each<[string, number | undefined, string, string, boolean]>([
    ['unbounded (Ollama: -1)', -1, 'thinking it over', 'a'.repeat(40), true],
    ['a bound the reply fits', 1000, 'thinking it over', 'a'.repeat(40), true],
    ['a bound inside the content: cut there, no call', 8, 'thinking it over', 'a'.repeat(16), false],
    ['a bound inside the thinking', 2, 'thinking', '', false],
  ])('options.num_predict: %s', async (_name, numPredict, thinking, content, whole) => {
    const turn = { thinking: 'thinking it over', content: 'a'.repeat(40), tool_calls: [{ name: 'shell', arguments: { command: 'ls' } }] };
    const server = await fakeOllama({ models, turns: [turn] });
    const res = await post(`${server.url}/api/chat`, { ...CHAT, options: { num_ctx: 4096, num_predict: numPredict } });
    expect(res.status).toBe(200);
    const out = lines(res.text);
    const text = (key: 'thinking' | 'content'): string => out.map((l) => (l.message as Record<string, string | undefined> | undefined)?.[key] ?? '').join('');
    expect(text('thinking')).toBe(thinking);
    expect(text('content')).toBe(content);
    expect(out.some((l) => (l.message as { tool_calls?: unknown } | undefined)?.tool_calls !== undefined)).toBe(whole);
    expect(out.at(-1)).toMatchObject({ done: true, done_reason: whole ? 'stop' : 'length' });
  });

  it.each([
    ['', 'missing request body'],
    ['{"model": "qwen3:8b", "messages": [', 'unexpected EOF'],
    ['{"model" "qwen3:8b"}', "invalid character '\"' after object key"],
    ['[]', 'json: cannot unmarshal array into Go value of type api.ChatRequest'],
  ])('answers body %j with 400 %j', async (raw, error) => {
    const server = await fakeOllama({ turns: [{ content: 'x' }] });
    const response = await fetch(`${server.url}/api/chat`, { method: 'POST', body: raw });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error });
  });
});

describe('fake Ollama keep_alive (api/types.go Duration.UnmarshalJSON)', () => {
  it.each([300, -1, 0, 1.5, null, '30m', '1h30m', '-1m', '300ms', '0', '+5s', '1.5h', '2h45m30.5s', '10µs', '10us', '7ns'])(
    'accepts %j',
    async (keepAlive) => {
      const server = await fakeOllama({ turns: [{ content: 'x' }] });
      const res = await post(`${server.url}/api/chat`, { ...CHAT, keep_alive: keepAlive });
      expect(res.status).toBe(200);
    },
  );

  it.each([
    ['-1', 'time: missing unit in duration "-1"'],
    ['300', 'time: missing unit in duration "300"'],
    ['', 'time: invalid duration ""'],
    ['abc', 'time: invalid duration "abc"'],
    ['-', 'time: invalid duration "-"'],
    ['.s', 'time: invalid duration ".s"'],
    ['5x', 'time: unknown unit "x" in duration "5x"'],
    ['1 h', 'time: unknown unit " h" in duration "1 h"'],
    ['1h30', 'time: missing unit in duration "1h30"'],
    ['5é', 'time: unknown unit "\\xc3\\xa9" in duration "5\\xc3\\xa9"'],
    ['9999999999h', 'time: invalid duration "9999999999h"'],
    [true, "Unsupported type: 'bool'"],
    [{}, "Unsupported type: 'map[string]interface {}'"],
    [[1], "Unsupported type: '[]interface {}'"],
  ])('rejects %j with 400 before any line', async (keepAlive, error) => {
    const server = await fakeOllama({ turns: [{ content: 'x' }] });
    const res = await post(`${server.url}/api/chat`, { ...CHAT, keep_alive: keepAlive });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toEqual({ error });
    expect(server.turnsServed).toBe(0);
  });

  it('checks the body before the model, like ShouldBindJSON', async () => {
    const server = await fakeOllama({ turns: [] });
    const res = await post(`${server.url}/api/chat`, { model: 'missing:1b', keep_alive: '-1', messages: [] });
    expect(res.status).toBe(400);
  });

  it.each([
    ['1h30m', 5_400_000_000_000],
    ['1.5h', 5_400_000_000_000],
    ['300ms', 300_000_000],
    ['-1m', -60_000_000_000],
    ['1µs', 1000],
    ['1μs', 1000],
    ['.5s', 500_000_000],
    ['0', 0],
  ])('parseGoDuration(%j) = %i ns', (text, ns) => {
    expect(parseGoDuration(text)).toEqual({ ns });
  });
});

describe('goJsonSyntaxError (encoding/json scanner messages)', () => {
  it.each([
    ['{"path": "a.txt", "content": ', 'unexpected end of JSON input'],
    ['"abc', 'unexpected end of JSON input'],
    ['', 'unexpected end of JSON input'],
    ['{"a" 1}', "invalid character '1' after object key"],
    ['{"a":1 "b":2}', 'invalid character \'"\' after object key:value pair'],
    ['{"a":1,}', "invalid character '}' looking for beginning of object key string"],
    ["{'a':1}", "invalid character '\\'' looking for beginning of object key string"],
    ['[1 2]', "invalid character '2' after array element"],
    ['{"a":1}x', "invalid character 'x' after top-level value"],
    ['tru', "invalid character ' ' in literal true (expecting 'e')"],
    ['nul!', "invalid character '!' in literal null (expecting 'l')"],
    ['-', "invalid character ' ' in numeric literal"],
    ['1.x', "invalid character 'x' after decimal point in numeric literal"],
    ['1e+', "invalid character ' ' in exponent of numeric literal"],
    ['"\\q"', "invalid character 'q' in string escape code"],
    ['"\\u12x4"', "invalid character 'x' in \\u hexadecimal character escape"],
    ['"a\nb"', "invalid character '\\n' in string literal"],
    ['{"a": @}', "invalid character '@' looking for beginning of value"],
  ])('%j → %j', (text, message) => {
    expect(goJsonSyntaxError(text)).toBe(message);
  });

  it.each(['{}', '[]', ' {"a": [1, 2.5e-3, -0, true, false, null, "\\u00e9"]} ', '0'])('accepts %j', (text) => {
    expect(goJsonSyntaxError(text)).toBeUndefined();
  });
});

describe('fake Ollama streaming shapes', () => {
  it('keeps the stream silent while a call is buffered (silent_call_ms)', async () => {
    const server = await fakeOllama({
      turns: [{ thinking: 'I will write the file', chunk_size: 100, silent_call_ms: 300, tool_calls: [{ name: 'write_file', arguments: { path: 'a' } }] }],
    });
    const { pieces } = await streamTimed(server.url, CHAT);
    const callAt = pieces.findIndex((p) => p.text.includes('tool_calls'));
    expect(callAt).toBeGreaterThan(0);
    const before = pieces.slice(0, callAt).map((p) => p.text).join('');
    expect(lines(before).map((l) => l.message)).toEqual([{ role: 'assistant', content: '', thinking: 'I will write the file' }]);
    // The silence sits between the thinking and the call (a timer never fires early).
    expect((pieces[callAt]?.at ?? 0) - (pieces[callAt - 1]?.at ?? 0)).toBeGreaterThanOrEqual(280);
  });

  it('with silent_call_ms and no call: silence, then an empty done (a swallowed call)', async () => {
    const server = await fakeOllama({ turns: [{ thinking: 'hm', silent_call_ms: 200 }] });
    const { pieces } = await streamTimed(server.url, CHAT);
    const parsed = lines(pieces.map((p) => p.text).join(''));
    expect(parsed.at(-1)).toMatchObject({ done: true, message: { role: 'assistant', content: '' } });
    expect((pieces.at(-1)?.at ?? 0) - (pieces[0]?.at ?? 0)).toBeGreaterThanOrEqual(180);
  });

  it('notices a client that leaves during the silence', async () => {
    // Ten minutes of silence: a close seen within the hang guard can only be the client's.
    const server = await fakeOllama({ turns: [{ thinking: 'hm', silent_call_ms: 600_000, tool_calls: [{ name: 'shell', arguments: {} }] }] });
    const controller = new AbortController();
    const response = await fetch(`${server.url}/api/chat`, { method: 'POST', body: JSON.stringify(CHAT), signal: controller.signal });
    const reader = response.body?.getReader();
    await reader?.read();
    controller.abort();
    const record = await server.waitForClose(0, 20_000);
    expect(record.clientClosed).toBe(true);
  });

  it('ends with the parser error line and no done line (tool_parse_error, harmony text)', async () => {
    const raw = '{"path": "a.txt", "content": "<b>';
    const server = await fakeOllama({ turns: [{ thinking: 'write it', content: 'ok', chunk_size: 100, tool_parse_error: raw, tool_calls: [{ name: 'x', arguments: {} }] }] });
    const res = await post(`${server.url}/api/chat`, CHAT);
    expect(res.status).toBe(200);
    const parsed = lines(res.text);
    expect(parsed.map((l) => l.message ?? l.error)).toEqual([
      { role: 'assistant', content: '', thinking: 'write it' },
      { role: 'assistant', content: 'ok' },
      `error parsing tool call: raw='${raw}', err=unexpected end of JSON input`,
    ]);
    // Go's json.Encoder escapes HTML characters.
    expect(res.text.trimEnd().split('\n').at(-1)).toContain('\\u003cb\\u003e');
    expect(parsed.some((l) => l.done === true)).toBe(false);
  });

  it('uses the qwen3 parser text when asked', async () => {
    const server = await fakeOllama({ turns: [{ thinking: 't', tool_parse_error: '{"name": "x" "arguments": {}}', tool_parse_error_parser: 'qwen3' }] });
    const parsed = lines((await post(`${server.url}/api/chat`, CHAT)).text);
    expect(parsed.at(-1)).toEqual({ error: "failed to parse JSON: invalid character '\"' after object key:value pair" });
  });

  it('answers HTTP 500 with no line when nothing was streamed (tool_parse_error_http) and for stream:false', async () => {
    const turn = { thinking: 'not sent', tool_parse_error: '{"a":', tool_parse_error_http: true };
    const server = await fakeOllama({ turns: [turn, { ...turn, tool_parse_error_http: false }] });
    const streamed = await post(`${server.url}/api/chat`, CHAT);
    expect(streamed.status).toBe(500);
    expect(streamed.contentType).toBe('application/json');
    expect(streamed.text).toBe(`{"error":"error parsing tool call: raw='{\\"a\\":', err=unexpected end of JSON input"}`);
    const whole = await post(`${server.url}/api/chat`, { ...CHAT, stream: false });
    expect(whole.status).toBe(500);
    expect(JSON.parse(whole.text)).toEqual({ error: `error parsing tool call: raw='{"a":', err=unexpected end of JSON input` });
  });

  it('puts the calls and the last content piece into the done line (calls_in_done)', async () => {
    const server = await fakeOllama({
      turns: [{ thinking: 'th', content: 'abcdefghij', chunk_size: 4, calls_in_done: true, tool_calls: [{ name: 'shell', arguments: { command: 'ls' } }] }],
    });
    const parsed = lines((await post(`${server.url}/api/chat`, CHAT)).text);
    expect(parsed.map((l) => l.message)).toEqual([
      { role: 'assistant', content: '', thinking: 'th' },
      { role: 'assistant', content: 'abcd' },
      { role: 'assistant', content: 'efgh' },
      { role: 'assistant', content: 'ij', tool_calls: [{ function: { index: 0, name: 'shell', arguments: { command: 'ls' } } }] },
    ]);
    expect(parsed.at(-1)).toMatchObject({ done: true, done_reason: 'stop' });
    expect(parsed.slice(0, -1).every((l) => l.done === false)).toBe(true);
  });

  it('sends one chunk per call with function.index 0, 1, … (split_calls)', async () => {
    const server = await fakeOllama({
      turns: [{ split_calls: true, tool_calls: [{ name: 'read_file', arguments: { path: 'a' } }, { name: 'read_file', arguments: { path: 'b' } }] }],
    });
    const parsed = lines((await post(`${server.url}/api/chat`, CHAT)).text);
    expect(parsed.map((l) => l.message)).toEqual([
      { role: 'assistant', content: '', tool_calls: [{ function: { index: 0, name: 'read_file', arguments: { path: 'a' } } }] },
      { role: 'assistant', content: '', tool_calls: [{ function: { index: 1, name: 'read_file', arguments: { path: 'b' } } }] },
      { role: 'assistant', content: '' },
    ]);
  });

  it('sends each `lines` entry as one line, thinking and content together or thinking after content', async () => {
    const server = await fakeOllama({
      turns: [{ lines: [{ thinking: 'a', content: 'b' }, { content: 'c' }, { thinking: 'd' }], thinking: 'ignored', done_reason: 'length' }],
    });
    const parsed = lines((await post(`${server.url}/api/chat`, CHAT)).text);
    expect(parsed.map((l) => l.message)).toEqual([
      { role: 'assistant', content: 'b', thinking: 'a' },
      { role: 'assistant', content: 'c' },
      { role: 'assistant', content: '', thinking: 'd' },
      { role: 'assistant', content: '' },
    ]);
    expect(parsed.at(-1)).toMatchObject({ done: true, done_reason: 'length' });
  });

  it('moves the last `lines` entry into the done line with calls_in_done', async () => {
    const server = await fakeOllama({ turns: [{ lines: [{ thinking: 'a' }, { thinking: 'b', content: 'c' }], calls_in_done: true }] });
    const parsed = lines((await post(`${server.url}/api/chat`, CHAT)).text);
    expect(parsed.map((l) => [l.done, l.message])).toEqual([
      [false, { role: 'assistant', content: '', thinking: 'a' }],
      [true, { role: 'assistant', content: 'c', thinking: 'b' }],
    ]);
  });

  it('gives calls real-format ids with tool_call_ids, keeps a scripted id, and omits an empty one', async () => {
    const server = await fakeOllama({
      tool_call_ids: true,
      turns: [{ tool_calls: [{ name: 'a', arguments: {} }, { name: 'b', arguments: {} }, { name: 'c', arguments: {}, id: 'mine' }, { name: 'd', arguments: {}, id: '' }] }],
    });
    const parsed = lines((await post(`${server.url}/api/chat`, CHAT)).text);
    const calls = (parsed[0]?.message as { tool_calls: Array<{ id?: string }> }).tool_calls;
    expect(calls[0]?.id).toMatch(/^call_[a-z0-9]{8}$/);
    expect(calls[1]?.id).toMatch(/^call_[a-z0-9]{8}$/);
    expect(calls[0]?.id).not.toBe(calls[1]?.id);
    expect(calls[2]?.id).toBe('mine');
    expect(calls[3]).not.toHaveProperty('id');
  });

  it('returns tool calls with stream:false only when the request offered tools', async () => {
    const turn = { content: 'x', tool_calls: [{ name: 'shell', arguments: {} }] };
    const server = await fakeOllama({ turns: [turn, turn] });
    const without = JSON.parse((await post(`${server.url}/api/chat`, { ...CHAT, stream: false })).text) as { message: object };
    expect(without.message).toEqual({ role: 'assistant', content: 'x' });
    const tools = [{ type: 'function', function: { name: 'shell' } }];
    const withTools = JSON.parse((await post(`${server.url}/api/chat`, { ...CHAT, stream: false, tools })).text) as { message: object };
    expect(withTools.message).toMatchObject({ tool_calls: [{ function: { index: 0, name: 'shell' } }] });
  });

  it('escapes HTML characters as Go does and reports a recent version by default', async () => {
    const server = await fakeOllama({ turns: [{ content: '<a & b>', chunk_size: 100 }] });
    const res = await post(`${server.url}/api/chat`, CHAT);
    expect(res.text).toContain('"content":"\\u003ca \\u0026 b\\u003e"');
    expect(lines(res.text)[0]?.message).toEqual({ role: 'assistant', content: '<a & b>' });
    expect(await (await fetch(`${server.url}/api/version`)).json()).toEqual({ version: '0.33.0' });
    expect((await fetch(`${server.url}/api/version`, { method: 'HEAD' })).status).toBe(200);
  });
});
