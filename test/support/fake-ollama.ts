/**
 * A fake Ollama server on real HTTP (127.0.0.1, ephemeral port) that plays scripted turns with
 * Ollama's wire format, for tests that use navi's Ollama client and the built CLI.
 * It can delay the first chunk (before the headers, as real Ollama does), stall, drop the
 * connection, send error or garbage lines, and answer 404 for models it does not have. Requests
 * are checked as server/routes.go ChatHandler checks them (body, keep_alive, think, model,
 * capabilities, format) before a scripted turn is used; a rejected request consumes no turn.
 * A `format` (structured outputs) is honoured as fake-ollama-format.ts describes.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DEFAULT_CAPABILITIES,
  DEFAULT_MODELS,
  DEFAULT_VERSION,
  EXHAUSTED_TURN,
  architectureOf,
  boundedTurn,
  doneFields,
  goJson,
  goJsonSyntaxError,
  keepAliveError,
  modelDetails,
  qualifiedModelName,
  tagEntry,
  thinkError,
  thinkRequested,
  toolParseErrorMessage,
  turnPlan,
  wholeMessage,
  type FakeModel,
  type FakeScript,
  type FakeTurn,
} from './fake-ollama-script.js';
import { constrainsAfterThinking, formatMismatch, formatOf } from './fake-ollama-format.js';
import { rendererFor } from './render-prompt.js';
import { expiryOf, fitPrompt, loadedContext, psEntry, type LoadedModel } from './fake-ollama-context.js';

export type { FakeModel, FakeScript, FakeToolCall, FakeTurn } from './fake-ollama-script.js';

/** One HTTP request the fake received. */
export interface RecordedRequest {
  method: string;
  path: string;
  /** Parsed JSON body; `undefined` when empty or not JSON. */
  body: Record<string, unknown> | undefined;
  /** Raw body length in bytes (what a local model would have to prefill). */
  bytes: number;
  /** sha256 of the raw body (hex): byte-exact comparisons without keeping the bytes. */
  sha256: string;
  /** `Date.now()` when the body had been read. */
  receivedAt: number;
  /** The `User-Agent` header (navi's names the Node.js version it runs on). */
  userAgent: string | undefined;
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
  /** Differences found by `expect_tools`, and replies a `format` would not have allowed. */
  readonly mismatches: string[];
  /** Replaces the script and restarts it from its first turn. */
  setScript(script: FakeScript): void;
  /** Resolves when request `index` has closed (or rejects after `timeoutMs`). */
  waitForClose(index: number, timeoutMs?: number): Promise<RecordedRequest>;
  /**
   * Holds the answers to `/api/chat` (each request read and recorded, nothing sent yet) until the
   * returned function is called: a test releases them once it has seen what should happen
   * meanwhile, instead of hoping a delay was long enough.
   */
  holdChats(): () => void;
  /** Stops the server, destroying open sockets (stalled streams included). */
  close(): Promise<void>;
}

export interface FakeOllamaOptions {
  /** Fixed port; default an ephemeral one. */
  port?: number;
  /** Called as each request's body has been read (the CLI logs with it). */
  onRequest?: (request: RecordedRequest) => void;
}

/** Pace of `endless_thinking` when no `chunk_delay_ms` is set: fast, but not a busy loop. */
const ENDLESS_CHUNK_DELAY_MS = 10;

/** Starts a fake Ollama serving `script`. */
export async function startFakeOllama(script: FakeScript, opts: FakeOllamaOptions = {}): Promise<FakeOllama> {
  const fake = unstartedFakeOllama(script, opts.onRequest);
  await fake.listen(opts.port ?? 0);
  return fake;
}

/**
 * A fake that does not listen yet (its `url` is empty until `listen` resolves): a file's shared
 * fake is made when the file loads and started by its `beforeAll` (fake-ollama-harness.ts).
 */
export function unstartedFakeOllama(script: FakeScript, onRequest?: (request: RecordedRequest) => void): FakeOllama & { listen(port: number): Promise<void> } {
  return new FakeOllamaServer(script, onRequest);
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
  /** Set by `holdChats`: chat answers wait for it. */
  private held: Promise<void> | undefined;
  /** A restart in progress (`restart_ms`); `close()` waits for it. */
  private restarting: Promise<void> | undefined;
  private closing = false;
  /** Models chats have loaded, by name, for `/api/ps` (fake-ollama-context.ts). */
  private readonly loaded = new Map<string, LoadedModel>();

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

  holdChats(): () => void {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    this.held = held;
    return () => {
      if (this.held === held) this.held = undefined;
      release();
    };
  }

  /** Stops listening and drops every connection, then listens again on the same port after `ms`. */
  private restart(ms: number): void {
    const port = (this.server.address() as AddressInfo).port;
    this.loaded.clear();
    this.restarting = new Promise<void>((resolve) => {
      this.server.close(() => {
        setTimeout(() => {
          if (this.closing) return resolve();
          this.server.listen(port, '127.0.0.1', () => resolve());
        }, ms);
      });
    });
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.restarting;
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
      sha256: '',
      receivedAt: Date.now(),
      userAgent: req.headers['user-agent'],
      clientClosed: false,
    };
    // After `receivedAt`: hashing is the model's time, never the harness gap the bench measures.
    record.sha256 = createHash('sha256').update(raw).digest('hex');
    this.requests.push(record);
    this.onRequest?.(record);
    const cancelled = new AbortController();
    res.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => {
      const markClosed = (): void => {
        if (record.closedAt !== undefined) return;
        record.closedAt = Date.now();
        record.clientClosed = !res.writableFinished;
        cancelled.abort();
        for (const wake of this.closeWaiters.splice(0)) wake();
        resolve();
      };
      res.on('close', markClosed);
      // A client that gave up while its body was still being read (a loaded machine) closed the
      // socket before this listener existed: its 'close' has already been emitted.
      if (res.socket === null || res.socket.destroyed) markClosed();
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
      case 'HEAD /api/version': // server/routes.go GenerateRoutes registers both
        sendJson(res, 200, { version: this.script.version ?? DEFAULT_VERSION });
        return;
      case 'GET /api/tags':
        sendJson(res, 200, { models: this.models().map(tagEntry) });
        return;
      case 'GET /api/ps':
        sendJson(res, 200, { models: this.running() });
        return;
      case 'POST /api/show':
        this.show(record.body, res);
        return;
      case 'POST /api/chat':
        await this.chat(record, raw, res, cancelled.signal);
        return;
      default:
        res.writeHead(404, { 'Content-Type': 'text/plain' });
        res.end('404 page not found');
    }
  }

  /** server/routes.go PsHandler: loaded models, the longest time left first. */
  private running(): Record<string, unknown>[] {
    const now = Date.now();
    const live = [...this.loaded.values()].filter((l) => l.expiresAt > now).sort((a, b) => b.expiresAt - a.expiresAt);
    return live.map((l) => psEntry(l, modelDetails(architectureOf(l.model.name))));
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
      // server/images.go 629-634: a model with a Go renderer says so in its Modelfile; the fake's
      // renderer is picked by name (render-prompt.ts rendererFor), qwen3's Go template otherwise.
      modelfile: `FROM ${model.name}${rendererFor(model.name) === 'qwen3' ? '' : `\nRENDERER ${rendererFor(model.name)}`}`,
      parameters: '',
      template: '{{ .Prompt }}',
      details: modelDetails(arch),
      model_info: modelInfo,
      capabilities: model.capabilities ?? DEFAULT_CAPABILITIES,
      modified_at: new Date(0).toISOString(),
    });
  }

  private async chat(record: RecordedRequest, raw: Buffer, res: http.ServerResponse, signal: AbortSignal): Promise<void> {
    if (this.held !== undefined) await this.held;
    const body = record.body ?? {};
    const model = typeof body.model === 'string' ? body.model : '';
    const rejection = chatRejection(raw, record.body, model, this.findModel(model));
    if (rejection !== undefined) {
      sendJson(res, rejection.status, { error: rejection.error });
      return;
    }
    const format = formatOf(record.body);
    if ('error' in format) {
      // llm/llama_server.go Completion fails before any line: streamResponse answers 500.
      sendJson(res, 500, { error: format.error });
      return;
    }
    // The runner is loaded with num_ctx clamped to the model's context (fake-ollama-context.ts);
    // a prompt larger than that is truncated, or refused with `truncate: false`, before the
    // model runs: a refused request consumes no turn.
    const fake = this.findModel(model) as FakeModel;
    const context = loadedContext(fake, body);
    const expiresAt = expiryOf(body.keep_alive, Date.now());
    if (expiresAt === undefined) this.loaded.delete(fake.name);
    else this.loaded.set(fake.name, { model: fake, contextLength: context, expiresAt });
    const fit = fitPrompt(this.script.ignores_truncate === true ? { ...body, truncate: undefined } : body, record.bytes, context);
    if (fit.kind === 'overflow') {
      sendJson(res, 400, { error: fit.error });
      return;
    }
    // Known difference from the real server: `messages: []` only loads the model there (one JSON
    // object with done_reason "load", or "unload" with keep_alive 0: server/routes.go ChatHandler);
    // here it plays the next turn, because tests post empty messages to drive the stream. navi
    // never sends an empty conversation.
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
    if (format.mode !== 'none') {
      const capabilities = this.findModel(model)?.capabilities ?? DEFAULT_CAPABILITIES;
      const mismatch = formatMismatch(turn, constrainsAfterThinking(capabilities, body.think));
      if (mismatch !== undefined) this.mismatches.push(`turn ${index}: ${mismatch}`);
    }
    // options.num_predict bounds the reply (boundedTurn cites the server).
    const options = body.options as Record<string, unknown> | undefined;
    await playTurn(res, boundedTurn(turn, options?.num_predict), body, model, fit.promptTokens, signal, this.script.tool_call_ids === true ? toolCallId : undefined);
    if (turn.restart_ms !== undefined) this.restart(turn.restart_ms);
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

/** Why ChatHandler would refuse this request before running the model, in the order it checks. */
function chatRejection(
  raw: Buffer,
  body: Record<string, unknown> | undefined,
  name: string,
  model: FakeModel | undefined,
): { status: number; error: string } | undefined {
  const text = raw.toString('utf8');
  // server/routes.go ChatHandler: ShouldBindJSON gives io.EOF for an empty body.
  if (text.trim() === '') return { status: 400, error: 'missing request body' };
  if (body === undefined) {
    // Any other bind error is a 400 with encoding/json's text; json.Decoder reports a cut-off
    // body as io.ErrUnexpectedEOF rather than Unmarshal's "unexpected end of JSON input".
    const syntax = goJsonSyntaxError(text);
    if (syntax === 'unexpected end of JSON input') return { status: 400, error: 'unexpected EOF' };
    if (syntax !== undefined && !syntax.endsWith('after top-level value')) return { status: 400, error: syntax };
    const parsed = JSON.parse(text) as unknown;
    if (Array.isArray(parsed)) return { status: 400, error: 'json: cannot unmarshal array into Go value of type api.ChatRequest' };
    if (parsed !== null) return { status: 400, error: `json: cannot unmarshal ${typeof parsed} into Go value of type api.ChatRequest` };
  }
  // encoding/json decodes fields in document order and returns the first Unmarshaler error
  // unchanged: api/types.go Duration.UnmarshalJSON (keep_alive), ThinkValue.UnmarshalJSON (think).
  for (const [key, value] of Object.entries(body ?? {})) {
    const error = key === 'keep_alive' ? keepAliveError(value) : key === 'think' ? thinkError(value) : undefined;
    if (error !== undefined) return { status: 400, error };
  }
  // server/routes.go ChatHandler → writeModelRefParseError fallback for an empty name.
  if (name === '') return { status: 400, error: 'model is required' };
  if (model === undefined) return { status: 404, error: `model '${name}' not found` };
  const capabilities = model.capabilities ?? DEFAULT_CAPABILITIES;
  // server/routes.go ChatHandler: think (true or a level) on a model without `thinking` is
  // refused with %q of the requested name; `think: false` passes (ThinkValue.Bool is false).
  if (!capabilities.includes('thinking') && thinkRequested(body?.think)) {
    return { status: 400, error: `${JSON.stringify(name)} does not support thinking` };
  }
  // server/routes.go scheduleRunner → server/images.go CheckCapabilities → handleScheduleError:
  // a missing `completion` is reported as "does not support chat" (ChatHandler), a missing
  // `tools` as "<fully qualified name> does not support tools".
  if (!capabilities.includes('completion')) return { status: 400, error: `${JSON.stringify(name)} does not support chat` };
  const tools = body?.tools;
  if (Array.isArray(tools) && tools.length > 0 && !capabilities.includes('tools')) {
    return { status: 400, error: `${qualifiedModelName(name)} does not support tools` };
  }
  return undefined;
}

/** server/routes.go toolCallId: `call_` and 8 random characters of [a-z0-9]. */
function toolCallId(): string {
  const letters = 'abcdefghijklmnopqrstuvwxyz0123456789';
  let id = 'call_';
  for (let i = 0; i < 8; i++) id += letters[Math.floor(Math.random() * letters.length)];
  return id;
}

/** One line to send; `held` lines are what a tool-call parser buffers (see `silent_call_ms`). */
interface OutLine {
  text: string;
  held: boolean;
}

/** Writes one scripted turn as Ollama would: NDJSON when streaming, one object otherwise. */
async function playTurn(
  res: http.ServerResponse,
  turn: FakeTurn,
  body: Record<string, unknown>,
  model: string,
  promptTokens: number,
  signal: AbortSignal,
  idFor: (() => string) | undefined,
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

  if (turn.tool_parse_error !== undefined && (turn.tool_parse_error_http === true || body.stream === false)) {
    // server/routes.go streamResponse: an error before anything was written sets
    // `Content-Type: application/json` and answers 500; writeChatResponse (stream:false) answers
    // 500 through c.JSON (`application/json; charset=utf-8`).
    const contentType = body.stream === false ? 'application/json; charset=utf-8' : 'application/json';
    res.writeHead(500, { 'Content-Type': contentType });
    res.end(goJson({ error: toolParseErrorMessage(turn) }));
    return;
  }

  const line = (fields: Record<string, unknown>): string =>
    `${goJson({ model, created_at: new Date().toISOString(), ...fields })}\n`;

  if (body.stream === false) {
    const offeredTools = Array.isArray(body.tools) && body.tools.length > 0;
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' });
    res.end(line({ message: wholeMessage(turn, offeredTools, idFor), ...doneFields(turn, promptTokens) }));
    return;
  }

  const plan = turnPlan(turn, idFor);
  const lines: OutLine[] = plan.visible.map((message) => ({ text: line({ message, done: false }), held: false }));
  if (turn.tool_parse_error !== undefined) {
    // server/routes.go streamResponse after the first write: json.Encoder writes the error as
    // one more line and the stream ends; the done chunk never comes.
    lines.push({ text: `${goJson({ error: toolParseErrorMessage(turn) })}\n`, held: true });
  } else {
    for (const message of plan.calls) lines.push({ text: line({ message, done: false }), held: true });
  }
  const injectAt = Math.min(turn.error_after_chunks ?? 1, lines.length);
  if (turn.garbage === true) {
    lines.splice(
      injectAt,
      0,
      { text: 'this is not json\n', held: false },
      { text: '<html><body>502 Bad Gateway</body></html>\n', held: false },
    );
  }
  if (turn.error_line !== undefined) {
    lines.splice(injectAt, lines.length - injectAt, { text: `${goJson({ error: turn.error_line })}\n`, held: false });
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
  // The parser holds a call back until it is whole: nothing at all is written meanwhile
  // (tools/tools.go Parser.Add, harmony/harmonyparser.go Add). Without a call this is the
  // "swallowed call": silence, then an empty done.
  let silenced = false;
  const silence = async (): Promise<boolean> => {
    if (silenced) return true;
    silenced = true;
    return pause(turn.silent_call_ms, signal);
  };

  for (const item of lines) {
    if (item.held && !(await silence())) return;
    if (!(await send(item.text))) return;
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
  if (turn.error_line === undefined && turn.tool_parse_error === undefined && turn.no_done !== true) {
    if (!(await silence())) return;
    if (!(await send(line({ message: plan.done, ...doneFields(turn, promptTokens) })))) return;
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
  // server/sched.go 88 ErrMaxQueue, answered 503 (server/routes.go 3113 handleScheduleError).
  if (status === 503) return 'server busy, please try again.  maximum pending requests exceeded';
  return 'llama runner process has terminated: exit status 2';
}

/** gin's c.JSON: `application/json; charset=utf-8`, Go's HTML-escaping encoder. */
function sendJson(res: http.ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
  res.end(goJson(value));
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
