/**
 * A fake Ollama server on real HTTP (127.0.0.1, ephemeral port) that plays scripted turns with
 * Ollama's wire format, for tests that use the real `ollama` client and the built CLI.
 * It can delay the first chunk (before the headers, as real Ollama does), stall, drop the
 * connection, send error or garbage lines, and answer 404 for models it does not have.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DEFAULT_MODELS,
  EXHAUSTED_TURN,
  architectureOf,
  doneFields,
  modelDetails,
  tagEntry,
  turnMessages,
  wireToolCalls,
  type FakeModel,
  type FakeScript,
  type FakeTurn,
} from './fake-ollama-script.js';

export type { FakeModel, FakeScript, FakeToolCall, FakeTurn } from './fake-ollama-script.js';

/** One HTTP request the fake received. */
export interface RecordedRequest {
  method: string;
  path: string;
  /** Parsed JSON body; `undefined` when empty or not JSON. */
  body: Record<string, unknown> | undefined;
  /** Raw body length in bytes (what a local model would have to prefill). */
  bytes: number;
  /** `Date.now()` when the body had been read. */
  receivedAt: number;
  /** Index of the scripted turn served (chat requests only). */
  turn?: number;
  /** The connection closed before the response was complete (client abort, timeout, stall). */
  clientClosed: boolean;
  /** `Date.now()` when the response ended or the connection closed. */
  closedAt?: number;
}

/** A running fake server. */
export interface FakeOllama {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Scripted turns served since start or the last `setScript`. */
  readonly turnsServed: number;
  /** Differences found by `expect_tools`. */
  readonly mismatches: string[];
  /** Replaces the script and restarts it from its first turn. */
  setScript(script: FakeScript): void;
  /** Resolves when request `index` has closed (or rejects after `timeoutMs`). */
  waitForClose(index: number, timeoutMs?: number): Promise<RecordedRequest>;
  /** Stops the server, destroying open sockets (stalled streams included). */
  close(): Promise<void>;
}

export interface FakeOllamaOptions {
  /** Fixed port; default an ephemeral one. */
  port?: number;
  /** Called as each request's body has been read (the CLI logs with it). */
  onRequest?: (request: RecordedRequest) => void;
}

/** Ollama's `/api/version` at the time of writing; any recent value works for the client. */
const DEFAULT_VERSION = '0.12.0';

/** Pace of `endless_thinking` when no `chunk_delay_ms` is set: fast, but not a busy loop. */
const ENDLESS_CHUNK_DELAY_MS = 10;

/** Starts a fake Ollama serving `script`. */
export async function startFakeOllama(script: FakeScript, opts: FakeOllamaOptions = {}): Promise<FakeOllama> {
  const fake = new FakeOllamaServer(script, opts.onRequest);
  await fake.listen(opts.port ?? 0);
  return fake;
}

class FakeOllamaServer implements FakeOllama {
  readonly requests: RecordedRequest[] = [];
  readonly mismatches: string[] = [];
  private script: FakeScript;
  private cursor = 0;
  private served = 0;
  private readonly sockets = new Set<Socket>();
  private readonly server: http.Server;
  private readonly closeWaiters: Array<() => void> = [];
  /** Responses not yet closed; `close()` waits for them so records are final when it returns. */
  private readonly openResponses = new Set<Promise<void>>();
  private address = '';
  private readonly onRequest: ((request: RecordedRequest) => void) | undefined;

  constructor(script: FakeScript, onRequest?: (request: RecordedRequest) => void) {
    this.script = script;
    this.onRequest = onRequest;
    this.server = http.createServer((req, res) => {
      void this.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) sendJson(res, 500, { error: `fake-ollama: ${String(err)}` });
        else res.destroy();
      });
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  get url(): string {
    return this.address;
  }

  get turnsServed(): number {
    return this.served;
  }

  async listen(port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => resolve());
    });
    this.address = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  setScript(script: FakeScript): void {
    this.script = script;
    this.cursor = 0;
    this.served = 0;
  }

  async waitForClose(index: number, timeoutMs = 2000): Promise<RecordedRequest> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const record = this.requests[index];
      if (record?.closedAt !== undefined) return record;
      if (Date.now() > deadline) throw new Error(`fake-ollama: request ${index} still open after ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        this.closeWaiters.push(resolve);
        setTimeout(resolve, 20);
      });
    }
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await Promise.all([...this.openResponses, new Promise<void>((resolve) => this.server.close(() => resolve()))]);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      path: (req.url ?? '/').split('?')[0] ?? '/',
      body: parseBody(raw),
      bytes: raw.length,
      receivedAt: Date.now(),
      clientClosed: false,
    };
    this.requests.push(record);
    this.onRequest?.(record);
    const cancelled = new AbortController();
    res.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => {
      res.on('close', () => {
        record.closedAt = Date.now();
        record.clientClosed = !res.writableFinished;
        cancelled.abort();
        for (const wake of this.closeWaiters.splice(0)) wake();
        resolve();
      });
    });
    this.openResponses.add(closed);
    void closed.then(() => this.openResponses.delete(closed));

    const route = `${record.method} ${record.path}`;
    switch (route) {
      case 'GET /':
      case 'HEAD /':
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('Ollama is running');
        return;
      case 'GET /api/version':
        sendJson(res, 200, { version: this.script.version ?? DEFAULT_VERSION });
        return;
      case 'GET /api/tags':
        sendJson(res, 200, { models: this.models().map(tagEntry) });
        return;
      case 'POST /api/show':
        this.show(record.body, res);
        return;
      case 'POST /api/chat':
        await this.chat(record, res, cancelled.signal);
        return;
      default:
        res.writeHead(404, { 'Content-Type': 'text/plain' });
        res.end('404 page not found');
    }
  }

  private models(): FakeModel[] {
    return this.script.models ?? DEFAULT_MODELS;
  }

  /** Ollama resolves `name` and `name:latest` to the same model. */
  private findModel(name: unknown): FakeModel | undefined {
    if (typeof name !== 'string') return undefined;
    return this.models().find((m) => m.name === name || m.name === `${name}:latest`);
  }

  private show(body: Record<string, unknown> | undefined, res: http.ServerResponse): void {
    const name = body?.model ?? body?.name;
    const model = this.findModel(name);
    if (model === undefined) {
      sendJson(res, 404, { error: `model '${String(name)}' not found` });
      return;
    }
    const arch = architectureOf(model.name);
    const modelInfo: Record<string, unknown> = { 'general.architecture': arch };
    if (model.context_length !== undefined) modelInfo[`${arch}.context_length`] = model.context_length;
    sendJson(res, 200, {
      license: '',
      modelfile: `FROM ${model.name}`,
      parameters: '',
      template: '{{ .Prompt }}',
      details: modelDetails(arch),
      model_info: modelInfo,
      capabilities: model.capabilities ?? ['completion', 'tools', 'thinking'],
      modified_at: new Date(0).toISOString(),
    });
  }

  private async chat(record: RecordedRequest, res: http.ServerResponse, signal: AbortSignal): Promise<void> {
    const body = record.body ?? {};
    const model = typeof body.model === 'string' ? body.model : '';
    if (this.findModel(model) === undefined) {
      sendJson(res, 404, { error: `model '${model}' not found` });
      return;
    }
    const index = this.cursor++;
    const scripted = this.script.turns[index];
    const turn = scripted ?? (this.script.on_exhausted === 'error' ? undefined : EXHAUSTED_TURN);
    if (turn === undefined) {
      sendJson(res, 500, { error: `fake-ollama: script exhausted after ${this.script.turns.length} turns` });
      return;
    }
    if (scripted !== undefined) this.served++;
    record.turn = index;
    this.checkTools(index, turn, body);
    await playTurn(res, turn, body, model, record.bytes, signal);
  }

  private checkTools(index: number, turn: FakeTurn, body: Record<string, unknown>): void {
    if (turn.expect_tools === undefined) return;
    const offered = Array.isArray(body.tools)
      ? (body.tools as unknown[]).map((t) => {
          const fn = (t as { function?: { name?: unknown } } | null)?.function;
          return typeof fn?.name === 'string' ? fn.name : '?';
        })
      : [];
    const want = [...turn.expect_tools].sort();
    const got = [...offered].sort();
    if (want.join(',') !== got.join(',')) {
      this.mismatches.push(`turn ${index}: expected tools [${want.join(', ')}], got [${got.join(', ')}]`);
    }
  }
}

/** Writes one scripted turn as Ollama would: NDJSON when streaming, one object otherwise. */
async function playTurn(
  res: http.ServerResponse,
  turn: FakeTurn,
  body: Record<string, unknown>,
  model: string,
  requestBytes: number,
  signal: AbortSignal,
): Promise<void> {
  // Real Ollama sends nothing, not even headers, until the model is loaded and prefilled.
  if (!(await pause(turn.first_chunk_delay_ms, signal))) return;

  if (turn.http_status !== undefined) {
    if (turn.error_body_text !== undefined) {
      res.writeHead(turn.http_status, { 'Content-Type': 'text/html' });
      res.end(turn.error_body_text);
    } else {
      sendJson(res, turn.http_status, { error: turn.error_message ?? defaultErrorMessage(turn.http_status, model) });
    }
    return;
  }

  const line = (fields: Record<string, unknown>): string =>
    `${JSON.stringify({ model, created_at: new Date().toISOString(), ...fields })}\n`;

  if (body.stream === false) {
    const message: Record<string, unknown> = { role: 'assistant', content: turn.content ?? '' };
    if (turn.thinking !== undefined) message.thinking = turn.thinking;
    if (turn.tool_calls !== undefined) message.tool_calls = wireToolCalls(turn.tool_calls);
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' });
    res.end(line({ message, ...doneFields(turn, requestBytes) }));
    return;
  }

  const lines = turnMessages(turn).map((message) => line({ message, done: false }));
  const injectAt = Math.min(turn.error_after_chunks ?? 1, lines.length);
  if (turn.garbage === true) {
    lines.splice(injectAt, 0, 'this is not json\n', '<html><body>502 Bad Gateway</body></html>\n');
  }
  if (turn.error_line !== undefined) {
    lines.splice(injectAt, lines.length - injectAt, `${JSON.stringify({ error: turn.error_line })}\n`);
  }

  res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
  let sent = 0;
  const interrupt = (): boolean => {
    if (turn.stall_after_chunks === sent) {
      // Headers out, then silence with the socket open, until the client or close() ends it.
      res.flushHeaders();
      return true;
    }
    if (turn.drop_after_chunks === sent) {
      res.flushHeaders();
      res.socket?.destroy();
      return true;
    }
    return false;
  };
  const send = async (text: string): Promise<boolean> => {
    if (interrupt()) return false;
    if (sent > 0 && !(await pause(turn.chunk_delay_ms, signal))) return false;
    if (signal.aborted) return false;
    // Waiting for the flush keeps `drop_after_chunks` from discarding lines still buffered.
    await new Promise<void>((resolve) => res.write(text, () => resolve()));
    sent++;
    return true;
  };

  for (const text of lines) {
    if (!(await send(text))) return;
  }
  if (turn.endless_thinking === true) {
    const delay = turn.chunk_delay_ms ?? ENDLESS_CHUNK_DELAY_MS;
    for (;;) {
      if (interrupt() || !(await pause(delay, signal))) return;
      await new Promise<void>((resolve) =>
        res.write(line({ message: { role: 'assistant', content: '', thinking: 'hmm… ' }, done: false }), () => resolve()),
      );
      sent++;
    }
  }
  if (turn.error_line === undefined && turn.no_done !== true) {
    if (!(await send(line({ message: { role: 'assistant', content: '' }, ...doneFields(turn, requestBytes) })))) {
      return;
    }
  } else if (interrupt()) {
    return;
  }
  res.end();
}

/** Waits `ms` unless the request is gone; false when it is. */
async function pause(ms: number | undefined, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  if (ms === undefined || ms <= 0) return true;
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

function defaultErrorMessage(status: number, model: string): string {
  if (status === 404) return `model '${model}' not found`;
  if (status === 400) return `"${model}" does not support thinking`;
  return 'llama runner process has terminated: exit status 2';
}

function sendJson(res: http.ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(value));
}

function parseBody(raw: Buffer): Record<string, unknown> | undefined {
  if (raw.length === 0) return undefined;
  try {
    const parsed: unknown = JSON.parse(raw.toString('utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
