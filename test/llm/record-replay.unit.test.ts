/**
 * `--record` / `--replay` at the transport: the real adapter records against the fake Ollama,
 * then a second adapter replays the file with no server at all. Table-driven over the answers
 * a server gives (thinking and text, tool calls split and in the done line, a malformed call's
 * error line, a 404, a dropped connection, nothing listening): the replay yields the same
 * chunks and fails with the same error, because the recorded lines go through the same
 * framing, client parsing and mapping. Then redaction, the mismatch diff, and a recording
 * used only in part.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createServer as createHttpServer, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidInputError, isNaviError } from '../../src/errors.js';
import { createRecorder } from '../../src/llm/exchange-recorder.js';
import { createReplayer } from '../../src/llm/exchange-replayer.js';
import { readRecording } from '../../src/llm/recording-read.js';
import type { ChatChunk, ChatRequest, LlmClient } from '../../src/llm/types.js';
import { createRedactor } from '../../src/tools/redact.js';
import { fakeOllama } from '../support/fake-ollama-harness.js';
import type { FakeOllama, FakeTurn } from '../support/fake-ollama.js';
import { closedPort, listenOnLoopback } from '../support/ports.js';
import { chatRequest, clientFor, collectUntilError, MODEL } from './llm-test-helpers.js';

const dirs: string[] = [];

afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tempFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'navi-rec-'));
  dirs.push(dir);
  return path.join(dir, 'rec.jsonl');
}

const noSecrets = createRedactor({});

/** What one call produced, comparable across record and replay (errors by class, code and message). */
interface Outcome {
  chunks: ChatChunk[];
  error: { name: string; code?: string; message: string } | null;
}

async function outcomeOf(client: LlmClient, req: ChatRequest, model = req.model): Promise<Outcome[]> {
  const out: Outcome[] = [];
  try {
    await client.showModel(model);
  } catch {
    // a 404 model is also a chat 404 below
  }
  const { chunks, error } = await collectUntilError(client.chatStream(req));
  out.push({ chunks, error: error === undefined ? null : summarise(error) });
  return out;
}

function summarise(err: unknown): { name: string; code?: string; message: string } {
  if (isNaviError(err)) return { name: err.name, code: err.code, message: err.message };
  return { name: err instanceof Error ? err.name : 'unknown', message: String(err) };
}

/**
 * Records `calls` against `live` (a fake, stopped once they are recorded, or a host nothing
 * listens on), then replays them with no server; returns both outcomes.
 */
async function recordThenReplay(live: FakeOllama | string, calls: ChatRequest[], redact = noSecrets): Promise<{ recorded: Outcome[]; replayed: Outcome[]; file: string }> {
  const host = typeof live === 'string' ? live : live.url;
  const file = tempFile();
  const recorder = createRecorder({ file, shownAs: 'rec.jsonl', redact, naviVersion: 'test' });
  const client = clientFor(host, { exchange: recorder.hooks });
  const recorded: Outcome[] = [];
  for (const req of calls) recorded.push(...(await outcomeOf(client, req)));
  recorder.close();
  if (typeof live !== 'string') await live.close();
  const replayer = createReplayer({ recording: readRecording(file, 'rec.jsonl'), redact, timing: false });
  const offline = clientFor(host, { exchange: replayer.hooks });
  const replayed: Outcome[] = [];
  for (const req of calls) replayed.push(...(await outcomeOf(offline, req)));
  replayer.finish();
  return { recorded, replayed, file };
}

const CASES: Array<{ name: string; turns: FakeTurn[]; errorCode?: string }> = [
  { name: 'thinking, then text', turns: [{ thinking: 'Let me think about it.', content: 'The answer is 42.', chunk_size: 5 }] },
  { name: 'tool calls split over chunks', turns: [{ thinking: 'Two files.', tool_calls: [{ name: 'read_file', arguments: { path: 'a.ts' } }, { name: 'read_file', arguments: { path: 'b.ts' } }], split_calls: true }] },
  { name: 'calls and text inside the done line (gpt-oss)', turns: [{ content: 'Reading it.', tool_calls: [{ name: 'list_dir', arguments: {} }], calls_in_done: true }] },
  { name: 'a malformed call: an error line mid-stream', turns: [{ thinking: 'I will call it.', tool_parse_error: '{"name": read_file' }], errorCode: 'malformed_tool_call' },
  { name: 'the answer cut at the output limit', turns: [{ content: 'This is cut', done_reason: 'length' }] },
  { name: 'a dropped connection mid-stream', turns: [{ content: 'partial answer that goes on', drop_after_chunks: 2 }], errorCode: 'stream_incomplete' },
  { name: 'a clean end without done (the repeat-token abort)', turns: [{ content: 'again again again', no_done: true }], errorCode: 'reply_cut_off' },
  { name: 'a 500 with an error body', turns: [{ http_status: 500, error_message: 'llama runner process has terminated' }], errorCode: 'runner_failed' },
];

describe('record, then replay without a server', () => {
  for (const c of CASES) {
    it(`${c.name}: the same chunks and the same error`, async () => {
      const fake = await fakeOllama({ turns: c.turns });
      const { recorded, replayed } = await recordThenReplay(fake, [chatRequest()]);
      expect(replayed).toEqual(recorded);
      expect(recorded[0]?.error?.code).toBe(c.errorCode);
      if (c.errorCode === undefined) expect(recorded[0]?.chunks.at(-1)?.type).toBe('done');
    });
  }

  it('an answer whose body is still open after its done line: recorded whole when the run closes the file (the run ends first)', async () => {
    // Ollama writes the done line, then ends the chunked body; under load the end can arrive
    // after navi has its answer and has finished the run.
    const held: ServerResponse[] = [];
    const server = createHttpServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write(`${JSON.stringify({ model: MODEL, message: { role: 'assistant', content: 'All done.' }, done: false })}\n`);
      res.write(`${JSON.stringify({ model: MODEL, message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop', prompt_eval_count: 3, eval_count: 2 })}\n`);
      held.push(res);
    });
    const host = `http://127.0.0.1:${await listenOnLoopback(server)}`;
    try {
      const file = tempFile();
      const recorder = createRecorder({ file, shownAs: 'rec.jsonl', redact: noSecrets, naviVersion: 'test' });
      const live = await collectUntilError(clientFor(host, { exchange: recorder.hooks }).chatStream(chatRequest()));
      expect(live.error).toBeUndefined();
      expect(held).toHaveLength(1);
      expect(held[0]?.writableEnded).toBe(false);
      recorder.close();
      expect(recorder.count).toBe(1);
      const replayer = createReplayer({ recording: readRecording(file, 'rec.jsonl'), redact: noSecrets, timing: false });
      const replayed = await collectUntilError(clientFor(host, { exchange: replayer.hooks }).chatStream(chatRequest()));
      expect(replayed).toEqual(live);
      replayer.finish();
    } finally {
      for (const res of held) res.end();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('a model that is not pulled: the same 404 error', async () => {
    const fake = await fakeOllama({ turns: [{ content: 'never' }] });
    const { recorded, replayed } = await recordThenReplay(fake, [chatRequest({ model: 'nope:1b' })]);
    expect(recorded[0]?.error?.code).toBe('model_not_found');
    expect(replayed).toEqual(recorded);
  });

  it('nothing listening: the same "cannot reach" error, exit 75', async () => {
    const host = `http://127.0.0.1:${await closedPort()}`;
    const { recorded, replayed } = await recordThenReplay(host, [chatRequest()]);
    expect(recorded[0]?.error?.code).toBe('ollama_unreachable');
    expect(replayed).toEqual(recorded);
  });

  it('several calls in order, with the metadata answered by content', async () => {
    const fake = await fakeOllama({ turns: [{ content: 'one' }, { content: 'two' }] });
    const first = chatRequest();
    const second = chatRequest({ messages: [{ role: 'user', content: 'hello' }, { role: 'assistant', content: 'one' }, { role: 'user', content: 'again' }] });
    const { recorded, replayed } = await recordThenReplay(fake, [first, second]);
    expect(replayed).toEqual(recorded);
    expect(replayed.map((o) => o.chunks.find((c) => c.type === 'text'))).toEqual([{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }]);
  });
});

describe('redaction', () => {
  it('no secret value reaches the file, and the redacted recording still replays', async () => {
    const secret = 'sk-live-0123456789abcdef';
    const redact = createRedactor({ OPENAI_API_KEY: secret });
    const fake = await fakeOllama({ turns: [{ thinking: `The key is ${secret}.`, content: `I saw ${secret} in the file.` }] });
    const req = chatRequest({ messages: [{ role: 'user', content: `use the key ${secret} "quoted"` }] });
    const { recorded, replayed, file } = await recordThenReplay(fake, [req], redact);
    const text = fs.readFileSync(file, 'utf8');
    expect(text).not.toContain(secret);
    expect(text).toContain('[REDACTED:OPENAI_API_KEY]');
    // The replay hands back what the file holds: the answer with the secret redacted.
    expect(recorded[0]?.error).toBeNull();
    expect(replayed[0]?.chunks.filter((c) => c.type === 'text').map((c) => (c.type === 'text' ? c.text : '')).join('')).toBe('I saw [REDACTED:OPENAI_API_KEY] in the file.');
  });
});

describe('mismatch', () => {
  async function recorded(turns: FakeTurn[], calls: ChatRequest[]): Promise<string> {
    const fake = await fakeOllama({ turns });
    const file = tempFile();
    const recorder = createRecorder({ file, shownAs: 'rec.jsonl', redact: noSecrets, naviVersion: 'test' });
    const live = clientFor(fake.url, { exchange: recorder.hooks });
    for (const req of calls) await collectUntilError(live.chatStream(req));
    recorder.close();
    await fake.close();
    return file;
  }

  const system = (text: string): ChatRequest =>
    chatRequest({ messages: [{ role: 'system', content: text }, { role: 'user', content: 'hello' }] });

  it('a changed system prompt: exit 2, naming the model call and showing the text around the change', async () => {
    const file = await recorded([{ content: 'ok' }], [system('You are a careful coder. Prefer small diffs.')]);
    const replayer = createReplayer({ recording: readRecording(file, 'rec.jsonl'), redact: noSecrets, timing: false });
    const { error } = await collectUntilError(clientFor('http://127.0.0.1:9', { exchange: replayer.hooks }).chatStream(system('You are a careless coder. Prefer small diffs.')));
    expect(error).toBeInstanceOf(InvalidInputError);
    const err = error as InvalidInputError;
    expect(err.code).toBe('replay_mismatch');
    expect(err.exitCode).toBe(2);
    expect(err.message).toMatch(/^--replay rec\.jsonl: model call 1 \(request 1, POST \/api\/chat\) differs from the one recorded at line \d+:/);
    expect(err.message).toContain('message 0 (system) content differs at character 15 (its line 1):');
    expect(err.message).toContain('recorded: "You are a careful coder. Prefer small diffs."');
    expect(err.message).toContain('now:      "You are a careless coder. Prefer small diffs."');
    expect(err.message).toMatch(/If the change is intended, record again: --record rec\.jsonl$/);
    // Sticky: the next request fails the same way, and so does the end of the run.
    const again = await collectUntilError(clientFor('http://127.0.0.1:9', { exchange: replayer.hooks }).chatStream(system('x')));
    expect(again.error).toBe(error);
    expect(() => replayer.finish()).toThrow(err.message);
  });

  it('a call the recording does not have, and recorded calls never made', async () => {
    const file = await recorded([{ content: 'a' }, { content: 'b' }], [chatRequest(), chatRequest({ messages: [{ role: 'user', content: 'second' }] })]);
    const short = createReplayer({ recording: readRecording(file, 'rec.jsonl'), redact: noSecrets, timing: false });
    await collectUntilError(clientFor('http://127.0.0.1:9', { exchange: short.hooks }).chatStream(chatRequest()));
    expect(() => short.finish()).toThrow(/the recording holds 2 model calls but this run made 1: model call 2 \(line \d+\) was never requested/);

    const long = createReplayer({ recording: readRecording(file, 'rec.jsonl'), redact: noSecrets, timing: false });
    const client = clientFor('http://127.0.0.1:9', { exchange: long.hooks });
    await collectUntilError(client.chatStream(chatRequest()));
    await collectUntilError(client.chatStream(chatRequest({ messages: [{ role: 'user', content: 'second' }] })));
    const third = await collectUntilError(client.chatStream(chatRequest()));
    expect((third.error as Error).message).toMatch(/model call 3 \(request 3, POST \/api\/chat\) was not recorded: the recording holds 2 model calls and this run makes more/);
  });

  it('with timing: the same chunks as without', async () => {
    const fake = await fakeOllama({ turns: [{ thinking: 'slow', content: 'answer', chunk_delay_ms: 5 }] });
    const file = tempFile();
    const recorder = createRecorder({ file, shownAs: 'rec.jsonl', redact: noSecrets, naviVersion: 'test' });
    const live = await collectUntilError(clientFor(fake.url, { exchange: recorder.hooks }).chatStream(chatRequest()));
    recorder.close();
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { type: string; response?: { lines?: Array<{ ms: number }> } });
    const ms = lines.find((l) => l.type === 'exchange')?.response?.lines?.map((l) => l.ms) ?? [];
    expect(ms.length).toBeGreaterThan(1);
    expect([...ms].sort((a, b) => a - b)).toEqual(ms);
    const replayer = createReplayer({ recording: readRecording(file, 'rec.jsonl'), redact: noSecrets, timing: true });
    const replayed = await collectUntilError(clientFor(fake.url, { exchange: replayer.hooks }).chatStream(chatRequest()));
    expect(replayed.chunks).toEqual(live.chunks);
  });
});

describe('a changed model name', () => {
  it("is shown as the first model call's setting diff, not as the unrecorded /api/show before it", async () => {
    const fake = await fakeOllama({ turns: [{ content: 'ok' }] });
    const file = tempFile();
    const recorder = createRecorder({ file, shownAs: 'rec.jsonl', redact: noSecrets, naviVersion: 'test' });
    await outcomeOf(clientFor(fake.url, { exchange: recorder.hooks }), chatRequest());
    recorder.close();
    const replayer = createReplayer({ recording: readRecording(file, 'rec.jsonl'), redact: noSecrets, timing: false });
    const client = clientFor('http://127.0.0.1:9', { exchange: replayer.hooks });
    const show = await client.showModel('llama3.1:8b').then(
      () => null,
      (err: unknown) => err,
    );
    expect((show as Error).message).toMatch(/request 1 POST \/api\/show \{"model":"llama3\.1:8b"\} was not recorded/);
    const { error } = await collectUntilError(client.chatStream(chatRequest({ model: 'llama3.1:8b' })));
    expect((error as Error).message).toContain('setting model: recorded "qwen3:8b", now "llama3.1:8b"');
    expect(() => replayer.finish()).toThrow(/setting model/);
  });
});
