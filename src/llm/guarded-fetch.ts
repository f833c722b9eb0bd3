/**
 * The `fetch` handed to the `ollama` client. The client cannot cancel a request before its first
 * chunk, passes no signal at all for non-streaming calls, prints to stdout when an error body is
 * not JSON and to stderr when a stream line is not JSON (ollama 0.6.4, `checkOk`/`parseJSON`).
 * Doing the HTTP ourselves around it fixes all of that in one place:
 *  - every request carries the call's own AbortSignal, so stop and timeouts cut the socket;
 *  - a non-2xx answer is read and thrown here, so the client's `checkOk` never sees it;
 *  - a streamed body is re-framed line by line: only JSON lines reach the client, and what the
 *    wire looked like (error line, garbage, done seen) is recorded for the error mapper.
 */
import { Agent as HttpAgent, request as httpRequest, type Agent, type IncomingMessage, type RequestOptions } from 'node:http';
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

/**
 * Marks the synthetic error line written in place of garbage, so the client throws at the right
 * point in the stream (chunks before the garbage still reach the consumer in order).
 */
const INVALID_LINE_MARKER = 'navi: invalid JSON line from server';

/** Long enough to recognise an HTML page or a proxy message, short enough for a one-line error. */
const EXCERPT_CHARS = 120;

export interface GuardedFetchOptions {
  /** Aborts the request at any point: before headers, while reading an error body, mid-stream. */
  signal: AbortSignal;
  state: WireState;
  /** Re-frame the body as validated NDJSON (streaming chat). Off for single-JSON endpoints. */
  ndjson: boolean;
  /**
   * The request body, already serialised by navi: sent instead of the one the client made
   * (chat requests; see `request-body.ts`).
   */
  body?: BodyParts;
  /** `--record` / `--replay` (`exchange-hooks.ts`): observe the exchange, or answer it without a network. */
  exchange?: ExchangeHooks;
}

/**
 * Bytes of a non-2xx body read for its message: enough for an `{"error": …}` body of a megabyte
 * or two to be parsed and shortened, not so much that an endless body fills memory.
 */
const MAX_ERROR_BODY_BYTES = 8 * 1024 * 1024;

/**
 * Builds the `fetch` for one request; see the module comment for what it guards against.
 *
 * The HTTP is `node:http`/`node:https` with a keep-alive agent, not the global (undici) fetch:
 * a chat request body is written as the pieces navi built (`request-body.ts`: the history's
 * bytes are reused from the previous call) and other bodies once as the client's string (undici
 * copies a body into a new buffer and runs it through its body pipeline), and a streamed body is framed line by line
 * straight from the socket into the one `ReadableStream` the client reads. That took several
 * milliseconds off every model call of a long history (SPEC §12, harness gap).
 */
export function createGuardedFetch(opts: GuardedFetchOptions): typeof fetch {
  const { signal, state, ndjson } = opts;
  const guarded = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : input);
    const linked = linkSignal(signal, init?.signal);
    const { hooks, body: prepared } = exchangeOf(opts, url, init);
    let res: ResponseHead;
    let observer: ExchangeObserver | undefined;
    try {
      // A replay answers here, from the recording, with nothing sent anywhere.
      observer = hooks?.observe?.(prepared.exchange);
      res = hooks?.send !== undefined ? await hooks.send(prepared.exchange, linked) : await send(url, init, prepared.parts, linked, state);
    } catch (err) {
      observer?.end('error', err);
      throw err;
    }
    state.gotResponse = true;
    const status = res.statusCode ?? 0;
    const statusText = res.statusMessage ?? '';
    observer?.response(status, statusText);
    try {
      if (status < 200 || status > 299) {
        const body = await readLimited(res, MAX_ERROR_BODY_BYTES);
        observer?.body(body);
        observer?.end('end');
        throw new HttpStatusError(status, errorMessage(body, `${status} ${statusText}`.trim()));
      }
      // No headers: the client reads them only for a failed status, which never gets here.
      if (ndjson) return new Response(ndjsonBody(res, state, observer), { status, statusText });
      const body = await readLimited(res, Number.POSITIVE_INFINITY);
      observer?.body(body);
      observer?.end('end');
      return new Response(body, { status, statusText });
    } catch (err) {
      observer?.end('error', err);
      throw err;
    }
  };
  return guarded;
}

const agents = new Map<string, Agent>();

/** One keep-alive agent per scheme: consecutive model calls reuse the connection. */
async function agentFor(protocol: string): Promise<{ agent: Agent; request: typeof httpRequest }> {
  if (protocol !== 'http:' && protocol !== 'https:') throw new TypeError(`unsupported protocol ${protocol}`);
  const mod = protocol === 'https:' ? await import('node:https') : { Agent: HttpAgent, request: httpRequest };
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
async function send(
  url: URL,
  init: RequestInit | undefined,
  body: BodyParts | undefined,
  signal: AbortSignal,
  state: WireState,
): Promise<IncomingMessage> {
  signal.throwIfAborted();
  const { agent, request } = await agentFor(url.protocol);
  const headers: Record<string, string> = { ...(init?.headers as Record<string, string> | undefined) };
  if (body !== undefined) headers['Content-Length'] = String(body.length);
  const options: RequestOptions = { method: init?.method ?? 'GET', headers, agent };
  for (let retry = 0; ; retry++) {
    try {
      return await sendOnce(request, url, options, body, signal, state);
    } catch (err) {
      const stale = err instanceof StaleSocketError;
      if (!stale || retry >= MAX_STALE_RETRIES || signal.aborted) throw stale ? err.cause : err;
    }
  }
}

/** The request's body as it goes on the wire, and as the exchange hooks see it. */
function exchangeOf(
  opts: GuardedFetchOptions,
  url: URL,
  init: RequestInit | undefined,
): { hooks: ExchangeHooks | undefined; body: { parts: BodyParts | undefined; exchange: ExchangeRequest } } {
  const given = init?.body;
  if (given !== undefined && given !== null && typeof given !== 'string') {
    throw new TypeError('navi: only string request bodies are supported');
  }
  const parts = opts.body ?? (given === undefined || given === null ? undefined : stringBody(given));
  const hooks = opts.exchange;
  return {
    hooks,
    body: {
      parts,
      // Joined only when a hook reads it: a plain run keeps writing the pieces as they are.
      exchange: {
        method: init?.method ?? 'GET',
        path: url.pathname,
        get body(): Buffer {
          return parts === undefined ? Buffer.alloc(0) : Buffer.concat(parts.chunks, parts.length);
        },
      },
    },
  };
}

function stringBody(text: string): BodyParts {
  const bytes = Buffer.from(text);
  return { chunks: [bytes], length: bytes.length };
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

/**
 * The client's own signal (set for streaming calls) is only ever aborted by its `abort()`,
 * which navi does not call; honour it anyway without creating a long-lived `AbortSignal.any`.
 */
function linkSignal(ours: AbortSignal, theirs: AbortSignal | null | undefined): AbortSignal {
  if (!theirs) return ours;
  const linked = new AbortController();
  const abort = (): void => linked.abort();
  if (ours.aborted || theirs.aborted) abort();
  ours.addEventListener('abort', abort, { once: true });
  theirs.addEventListener('abort', abort, { once: true });
  return linked.signal;
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

/**
 * The streamed body as the client will read it: only JSON objects, one per line. A line that
 * is not JSON becomes a marked error line and ends the stream; `{"error": …}` and `done` are
 * recorded. The socket is paused while the reader is behind, so a fast server cannot fill memory.
 */
function ndjsonBody(res: ResponseHead, state: WireState, observer: ExchangeObserver | undefined): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let buffer = '';
  let closed = false;

  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const finish = (last: string | undefined, error?: Error): void => {
          if (closed) return;
          closed = true;
          observer?.end(error === undefined ? 'end' : 'error', error);
          if (last !== undefined) controller.enqueue(encoder.encode(last));
          if (error) controller.error(error);
          else controller.close();
          res.destroy();
        };
        const handle = (line: string): void => {
          const trimmed = line.trim();
          if (closed || trimmed === '') return;
          observer?.line(trimmed);
          let parsed: unknown;
          try {
            parsed = JSON.parse(trimmed);
          } catch {
            parsed = undefined;
          }
          if (!isRecord(parsed)) {
            state.invalidLine = excerpt(trimmed);
            finish(`${JSON.stringify({ error: INVALID_LINE_MARKER })}\n`);
            return;
          }
          if (parsed.error !== undefined) {
            const message = errorText(parsed.error);
            state.streamError = message;
            finish(`${JSON.stringify({ error: message })}\n`);
            return;
          }
          if (parsed.done === true) state.sawDone = true;
          controller.enqueue(encoder.encode(`${trimmed}\n`));
        };
        res.on('data', (chunk: Buffer) => {
          // Only the new text is searched for line ends: re-splitting the whole buffer on every
          // chunk made a long line (a 20 MB tool argument) cost time quadratic in its length.
          const text = decoder.decode(chunk, { stream: true });
          let start = 0;
          for (let nl = text.indexOf('\n'); nl !== -1 && !closed; nl = text.indexOf('\n', start)) {
            handle(buffer + text.slice(start, nl));
            buffer = '';
            start = nl + 1;
          }
          buffer += text.slice(start);
          if (!closed && (controller.desiredSize ?? 1) <= 0) res.pause();
        });
        res.once('end', () => {
          buffer += decoder.decode();
          handle(buffer);
          buffer = '';
          state.bodyEnded = true;
          finish(undefined);
        });
        // A dropped connection mid-body: 'aborted' then 'error' (ECONNRESET) or 'close' alone.
        res.on('error', (err) => finish(undefined, err));
        res.once('close', () => {
          if (!res.complete) finish(undefined, Object.assign(new Error('connection closed mid-response'), { code: 'ECONNRESET' }));
        });
      },
      pull() {
        if (!closed && res.isPaused()) res.resume();
      },
      cancel() {
        if (!closed) observer?.end('cancelled');
        closed = true;
        res.destroy();
      },
    },
    { highWaterMark: 64 },
  );
}

/** An `error` field as text: the string itself, anything else as JSON. */
function errorText(error: unknown): string {
  return typeof error === 'string' ? error : JSON.stringify(error);
}

function excerpt(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ');
  return oneLine.length > EXCERPT_CHARS ? `${oneLine.slice(0, EXCERPT_CHARS)}…` : oneLine;
}
