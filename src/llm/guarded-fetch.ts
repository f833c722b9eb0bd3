/**
 * navi's HTTP to Ollama, on `node:http`/`node:https` directly. Each request carries its call's
 * own AbortSignal, so stop and the streaming timeouts cut the socket at any moment (before the
 * headers, while reading an error body, mid-stream); a non-2xx answer is read and thrown as an
 * `HttpStatusError` with the server's message; a streamed body is framed line by line and each
 * line parsed once, here, into the object the mapping reads, with what the wire looked like
 * (error line, garbage, done seen) recorded for the error mapper. Nothing is printed anywhere.
 *
 * Not the global (undici) fetch: a chat request body is written as the pieces navi built
 * (`request-body.ts`: the history's bytes are reused from the previous call), where undici copies
 * a body into a new buffer and runs it through its body pipeline; and a streamed body is framed
 * and parsed straight from the socket. That took several milliseconds off every model call of a
 * long history (SPEC §12, harness gap). Each line used to be parsed here for validation and again
 * by the `ollama` npm client; it is parsed once now, and the client is gone.
 */
import type * as Https from 'node:https';
import { Agent as HttpAgent, request as httpRequest, type Agent, type IncomingMessage, type RequestOptions } from 'node:http';
import { importModule } from '../dynamic-import.js';
import { isRecord } from '../util/guards.js';
import type { ExchangeHooks, ExchangeObserver, ExchangeRequest, ResponseHead } from './exchange-hooks.js';

/** A request body in pieces, and its length in bytes (`request-body.ts` builds chat bodies). */
export interface BodyParts {
  chunks: Buffer[];
  length: number;
}

/** What the guarded fetch saw on the wire; `ollama-errors.ts` reads it to classify failures. */
export interface WireState {
  /** Response headers arrived (distinguishes "unreachable" from "connection dropped mid-stream"). */
  gotResponse: boolean;
  /** A `{"error": …}` line arrived inside a 200 stream. */
  streamError?: string;
  /** The first line that was not a JSON object (trimmed, shortened). */
  invalidLine?: string;
  /** A line with `done: true` arrived. */
  sawDone: boolean;
  /** The body ended normally (no socket error). */
  bodyEnded: boolean;
}

/** Creates the state one request's guarded fetch writes into. */
export function newWireState(): WireState {
  return { gotResponse: false, sawDone: false, bodyEnded: false };
}

/** A non-2xx answer from the server, with the message from its `{"error": …}` body when present. */
export class HttpStatusError extends Error {
  readonly status: number;
  /** The server's own message (from `{"error": …}`), or the first line of a non-JSON body. */
  readonly serverMessage: string;

  constructor(status: number, serverMessage: string) {
    super(`HTTP ${status}: ${serverMessage}`);
    this.name = 'HttpStatusError';
    this.status = status;
    this.serverMessage = serverMessage;
  }
}

/** Long enough to recognise an HTML page or a proxy message, short enough for a one-line error. */
const EXCERPT_CHARS = 120;

export interface GuardedRequestOptions {
  /** Aborts the request at any point: before headers, while reading an error body, mid-stream. */
  signal: AbortSignal;
  state: WireState;
  /** `--record` / `--replay` (`exchange-hooks.ts`): observe the exchange, or answer it without a network. */
  exchange?: ExchangeHooks;
}

/** One request: where, how, and its body as navi serialised it (`request-body.ts` for chat bodies). */
export interface HttpCall {
  url: URL;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: BodyParts;
}

/**
 * Bytes of a non-2xx body read for its message: enough for an `{"error": …}` body of a megabyte
 * or two to be parsed and shortened, not so much that an endless body fills memory.
 */
const MAX_ERROR_BODY_BYTES = 8 * 1024 * 1024;

/**
 * A single-JSON endpoint (`/api/show`, `/api/tags`, `/api/version`): the parsed body. A body that
 * is not JSON rejects with the `SyntaxError` of `JSON.parse`.
 */
export async function requestJson(opts: GuardedRequestOptions, call: HttpCall): Promise<unknown> {
  const { res, observer } = await open(opts, call);
  try {
    const body = await readLimited(res, Number.POSITIVE_INFINITY);
    observer?.body(body);
    observer?.end('end');
    return JSON.parse(body) as unknown;
  } catch (err) {
    observer?.end('error', err);
    throw err;
  }
}

/**
 * A streamed NDJSON endpoint (`/api/chat`): each line parsed once, as it arrives. The iterator
 * ends when the body ends; it throws at an `{"error": …}` line or a line that is not a JSON
 * object (after the lines before it), and on a dropped connection. `return()` (the consumer
 * stopped early) closes the response.
 */
export async function requestStream(opts: GuardedRequestOptions, call: HttpCall): Promise<AsyncIterableIterator<Record<string, unknown>>> {
  const { res, observer } = await open(opts, call);
  return new LineStream(res, opts.state, observer);
}

/** Sends the request and returns the head of a 2xx answer; a non-2xx one is read and thrown. */
async function open(opts: GuardedRequestOptions, call: HttpCall): Promise<{ res: ResponseHead; observer: ExchangeObserver | undefined }> {
  const { signal, state } = opts;
  const hooks = opts.exchange;
  const exchange = exchangeOf(call);
  let res: ResponseHead;
  let observer: ExchangeObserver | undefined;
  try {
    // A replay answers here, from the recording, with nothing sent anywhere.
    observer = hooks?.observe?.(exchange);
    res = hooks?.send !== undefined ? await hooks.send(exchange, signal) : await send(call, signal, state);
  } catch (err) {
    observer?.end('error', err);
    throw err;
  }
  state.gotResponse = true;
  const status = res.statusCode ?? 0;
  const statusText = res.statusMessage ?? '';
  observer?.response(status, statusText);
  if (status >= 200 && status <= 299) return { res, observer };
  let body: string;
  try {
    body = await readLimited(res, MAX_ERROR_BODY_BYTES);
  } catch (err) {
    observer?.end('error', err);
    throw err;
  }
  observer?.body(body);
  observer?.end('end');
  throw new HttpStatusError(status, errorMessage(body, `${status} ${statusText}`.trim()));
}

const agents = new Map<string, Agent>();

/** One keep-alive agent per scheme: consecutive model calls reuse the connection. */
async function agentFor(protocol: string): Promise<{ agent: Agent; request: typeof httpRequest }> {
  if (protocol !== 'http:' && protocol !== 'https:') throw new TypeError(`unsupported protocol ${protocol}`);
  const mod = protocol === 'https:' ? ((await importModule('node:https')) as typeof Https) : { Agent: HttpAgent, request: httpRequest };
  let agent = agents.get(protocol);
  if (agent === undefined) {
    agent = new mod.Agent({ keepAlive: true });
    agents.set(protocol, agent);
  }
  return { agent, request: mod.request };
}

/** How long a response that already sent `done` may take to end before its socket is cut. */
const AFTER_DONE_GRACE_MS = 1000;

/** Error codes of a write to a kept-alive connection the server had already closed. */
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE']);

/** Fresh connections tried after stale kept-alive ones, before the error is the user's. */
const MAX_STALE_RETRIES = 3;

/**
 * Sends the request and resolves with the response head; rejects on network errors and abort.
 * A kept-alive connection the server closed while navi was busy (Ollama and proxies drop idle
 * ones) fails the request before any answer; that request never reached the server, so it is
 * sent again on a new connection, as Node's documentation recommends (`req.reusedSocket`).
 */
async function send(call: HttpCall, signal: AbortSignal, state: WireState): Promise<IncomingMessage> {
  signal.throwIfAborted();
  const { url, body } = call;
  const { agent, request } = await agentFor(url.protocol);
  const headers: Record<string, string> = { ...call.headers };
  if (body !== undefined) headers['Content-Length'] = String(body.length);
  const options: RequestOptions = { method: call.method, headers, agent };
  for (let retry = 0; ; retry++) {
    try {
      return await sendOnce(request, url, options, body, signal, state);
    } catch (err) {
      const stale = err instanceof StaleSocketError;
      if (!stale || retry >= MAX_STALE_RETRIES || signal.aborted) throw stale ? err.cause : err;
    }
  }
}

/** The request as the exchange hooks see it; its body joined only when a hook reads it. */
function exchangeOf(call: HttpCall): ExchangeRequest {
  const parts = call.body;
  return {
    method: call.method,
    path: call.url.pathname,
    get body(): Buffer {
      return parts === undefined ? Buffer.alloc(0) : Buffer.concat(parts.chunks, parts.length);
    },
  };
}

/** A request that failed on a reused connection before any answer (see `send`). */
class StaleSocketError extends Error {}

/**
 * One attempt. An abort cuts the socket — except once the response has sent its `done` line:
 * the caller disposes of every request when it has what it needs, and letting the last bytes
 * arrive keeps the keep-alive connection for the next call (a stuck server is cut after a grace).
 */
function sendOnce(
  request: typeof httpRequest,
  url: URL,
  options: RequestOptions,
  body: BodyParts | undefined,
  signal: AbortSignal,
  state: WireState,
): Promise<IncomingMessage> {
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(url, options);
    const cut = (): void => {
      req.destroy(new DOMException('the request was aborted', 'AbortError'));
    };
    const onAbort = (): void => {
      if (!state.sawDone) return cut();
      setTimeout(cut, AFTER_DONE_GRACE_MS).unref();
    };
    const release = (): void => signal.removeEventListener('abort', onAbort);
    signal.addEventListener('abort', onAbort, { once: true });
    // `on`, not `once`: a destroyed request may report more than one error, and an unheard
    // 'error' event would crash the process.
    req.on('error', (err: NodeJS.ErrnoException) => {
      release();
      const stale = req.reusedSocket && !state.gotResponse && STALE_SOCKET_CODES.has(err.code ?? '');
      reject(stale ? new StaleSocketError('stale kept-alive connection', { cause: err }) : err);
    });
    req.once('close', release);
    req.once('response', resolve);
    // Written before the socket is assigned, the pieces leave in one writev with the headers.
    for (const chunk of body?.chunks ?? []) req.write(chunk);
    req.end();
  });
}

/** The body as text, at most `limit` bytes (then the connection is cut). */
async function readLimited(res: ResponseHead, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    const piece = size + chunk.length > limit ? chunk.subarray(0, limit - size) : chunk;
    chunks.push(piece);
    size += piece.length;
    if (size >= limit) {
      res.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The server's error message: `{"error": …}` when JSON, else the first line of the text. */
function errorMessage(text: string, fallback: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return fallback;
  try {
    const parsed: unknown = JSON.parse(trimmed);
    if (isRecord(parsed) && parsed.error !== undefined) return errorText(parsed.error);
  } catch {
    // Not JSON (a proxy's HTML page, a plain-text 502): fall through to the first line.
  }
  return excerpt(trimmed.split('\n')[0] ?? fallback);
}

/** Parsed lines held while the consumer is behind before the socket is paused. */
const HIGH_WATER_LINES = 64;

/**
 * The streamed body as parsed lines: only JSON objects, one per line. A line that is not JSON, or
 * an `{"error": …}` line, ends the stream with an error after the lines before it (recorded in the
 * wire state for the error mapper); `done` is recorded. The socket is paused while the consumer
 * is behind, so a fast server cannot fill memory.
 */
class LineStream implements AsyncIterableIterator<Record<string, unknown>> {
  private readonly queue: Record<string, unknown>[] = [];
  private closed = false;
  /** Why the stream ended, once it has (undefined: a clean end). */
  private failure: Error | undefined;
  private waiter: { resolve: (r: IteratorResult<Record<string, unknown>>) => void; reject: (err: unknown) => void } | undefined;
  private readonly decoder = new TextDecoder();
  private buffer = '';

  constructor(
    private readonly res: ResponseHead,
    private readonly state: WireState,
    private readonly observer: ExchangeObserver | undefined,
  ) {
    res.on('data', (chunk: Buffer) => {
      // Only the new text is searched for line ends: re-splitting the whole buffer on every
      // chunk made a long line (a 20 MB tool argument) cost time quadratic in its length.
      const text = this.decoder.decode(chunk, { stream: true });
      let start = 0;
      for (let nl = text.indexOf('\n'); nl !== -1 && !this.closed; nl = text.indexOf('\n', start)) {
        this.handle(this.buffer + text.slice(start, nl));
        this.buffer = '';
        start = nl + 1;
      }
      this.buffer += text.slice(start);
      if (!this.closed && this.queue.length >= HIGH_WATER_LINES) res.pause();
    });
    res.once('end', () => {
      this.buffer += this.decoder.decode();
      this.handle(this.buffer);
      this.buffer = '';
      state.bodyEnded = true;
      this.finish();
    });
    // A dropped connection mid-body: 'aborted' then 'error' (ECONNRESET) or 'close' alone.
    res.on('error', (err) => this.finish(err));
    res.once('close', () => {
      if (!res.complete) this.finish(Object.assign(new Error('connection closed mid-response'), { code: 'ECONNRESET' }));
    });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<Record<string, unknown>>> {
    const value = this.queue.shift();
    if (value !== undefined) {
      if (!this.closed && this.queue.length < HIGH_WATER_LINES && this.res.isPaused()) this.res.resume();
      return Promise.resolve({ value, done: false });
    }
    if (this.closed) return this.failure === undefined ? Promise.resolve({ value: undefined, done: true }) : Promise.reject(this.failure);
    if (this.res.isPaused()) this.res.resume();
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** The consumer stopped reading: close the response. */
  return(): Promise<IteratorResult<Record<string, unknown>>> {
    if (!this.closed) this.observer?.end('cancelled');
    this.closed = true;
    this.queue.length = 0;
    this.res.destroy();
    return Promise.resolve({ value: undefined, done: true });
  }

  private handle(line: string): void {
    const trimmed = line.trim();
    if (this.closed || trimmed === '') return;
    this.observer?.line(trimmed);
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      parsed = undefined;
    }
    if (!isRecord(parsed)) {
      this.state.invalidLine = excerpt(trimmed);
      this.finish(new Error(`invalid JSON line from server: ${this.state.invalidLine}`));
      return;
    }
    if (parsed.error !== undefined) {
      const message = errorText(parsed.error);
      this.state.streamError = message;
      this.finish(new Error(message));
      return;
    }
    this.push(parsed);
    if (parsed.done === true) {
      this.state.sawDone = true;
      // The answer is whole at its `done` line: the consumer stops reading there, and the run
      // may end (closing a `--record` file) before the body's last bytes arrive.
      this.observer?.end('end');
    }
  }

  private push(value: Record<string, unknown>): void {
    const waiter = this.waiter;
    if (waiter !== undefined) {
      this.waiter = undefined;
      waiter.resolve({ value, done: false });
    } else {
      this.queue.push(value);
    }
  }

  /** Ends the stream: the lines already queued are still read, then the end or the error. */
  private finish(error?: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.failure = error;
    this.observer?.end(error === undefined ? 'end' : 'error', error);
    this.res.destroy();
    const waiter = this.waiter;
    if (waiter === undefined) return;
    this.waiter = undefined;
    if (error === undefined) waiter.resolve({ value: undefined, done: true });
    else waiter.reject(error);
  }
}

/** An `error` field as text: the string itself, anything else as JSON. */
function errorText(error: unknown): string {
  return typeof error === 'string' ? error : JSON.stringify(error);
}

function excerpt(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ');
  return oneLine.length > EXCERPT_CHARS ? `${oneLine.slice(0, EXCERPT_CHARS)}…` : oneLine;
}
