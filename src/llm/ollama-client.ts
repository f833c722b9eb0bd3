/**
 * The `LlmClient` over Ollama's HTTP API. The request bodies are navi's own (`request-body.ts`,
 * `ollama-mapping.ts`); the HTTP is `guarded-fetch.ts`, which cuts the connection at any moment
 * for stop and the streaming timeouts (including during a silent prefill) and parses each
 * streamed line once; `ollama-mapping.ts` turns the parsed lines into chunks. No `ollama` npm
 * client: it only parsed every line a second time.
 */
import { InvalidInputError, LlmUnavailableError } from '../errors.js';
import { isRecord } from '../util/guards.js';
import { newWireState, requestJson, requestStream, type BodyParts, type HttpCall, type WireState } from './guarded-fetch.js';
import { STREAM_ENDED_WITHOUT_DONE, toLlmError } from './ollama-errors.js';
import { toChatChunks } from './ollama-mapping.js';
import { ChatBodies, plainChatBody } from './request-body.js';
import { RequestGuard } from './request-guard.js';
import type {
  ChatChunk,
  ChatRequest,
  ChatResult,
  ChatUsage,
  LlmClient,
  LlmClientOptions,
  ModelDetails,
  RunningModel,
  ToolCallRequest,
} from './types.js';

/** `/api/show`, `/api/tags` and `/api/version` answer in milliseconds; 10 s means a stuck server. */
const METADATA_TIMEOUT_S = 10;

/** Ollama's port when the host is given without one (`OLLAMA_HOST=myhost`), as the client does. */
const DEFAULT_PORT = '11434';

/** Creates the Ollama adapter. Cheap: nothing is loaded or connected before the first call. */
export function createOllamaClient(opts: LlmClientOptions): LlmClient {
  return new OllamaAdapter(opts);
}

class OllamaAdapter implements LlmClient {
  private readonly opts: LlmClientOptions;
  /** Host as written in messages: scheme, host and port, never credentials. */
  private readonly host: string;
  /** Base URL of every request (credentials kept), or why the host cannot be used. */
  private readonly base: URL | InvalidInputError;
  /** Chat bodies built on the previous request's bytes. */
  private readonly bodies = new ChatBodies();
  /** `/api/show` answers by model name. */
  private readonly shown = new Map<string, Promise<ModelDetails>>();

  constructor(opts: LlmClientOptions) {
    this.opts = opts;
    this.host = displayHost(opts.host);
    this.base = baseUrl(opts.host);
  }

  async *chatStream(req: ChatRequest): AsyncGenerator<ChatChunk, void, undefined> {
    const guard = new RequestGuard(req.signal);
    const wire = newWireState();
    const strict = this.opts.strict ?? { firstChunk: true, chunk: true };
    // A lenient limit only asks whether the server is still up (LlmClientOptions.strict).
    const alive = (): Promise<boolean> =>
      this.version(guard.controller.signal).then(
        () => true,
        () => false,
      );
    let timeoutS = this.opts.firstChunkTimeoutS;
    const fail = (err: unknown): Error =>
      toLlmError(err, {
        host: this.host,
        model: req.model,
        endpoint: '/api/chat',
        stopCause: guard.stopCause,
        wire,
        timeoutS: guard.stopCause === 'call_timeout' ? (this.opts.callTimeoutS ?? 0) : timeoutS,
      });

    try {
      let iterator: AsyncIterator<Record<string, unknown>>;
      try {
        guard.limitTotal(this.opts.callTimeoutS ?? 0);
        // Real Ollama sends no headers until the first chunk exists (model loaded, prompt
        // prefilled, and — for a model that starts with a tool call — the whole call written),
        // so this timer covers connecting, waiting for headers and waiting for the first line.
        guard.arm('first_chunk_timeout', timeoutS, strict.firstChunk ? undefined : alive);
        const body = this.opts.plainBodies ? plainChatBody(req) : this.bodies.build(req);
        iterator = await guard.race(requestStream(this.requestOptions(guard.controller.signal, wire), this.call('POST', '/api/chat', body)));
      } catch (err) {
        throw fail(err);
      }

      for (let first = true; ; first = false) {
        let next: IteratorResult<Record<string, unknown>>;
        try {
          if (guard.stopCause !== undefined) throw new Error('stopped between chunks');
          if (!first) {
            timeoutS = this.opts.chunkTimeoutS;
            guard.arm('chunk_timeout', timeoutS, strict.chunk ? undefined : alive);
          }
          next = await guard.race(iterator.next());
          // Only network silence counts: the consumer may hold a chunk as long as it likes.
          guard.disarm();
        } catch (err) {
          throw fail(err);
        }
        if (next.done === true) {
          // The body ended cleanly before a `done` line.
          wire.bodyEnded = true;
          throw fail(new Error(STREAM_ENDED_WITHOUT_DONE));
        }
        for (const chunk of toChatChunks(next.value, req.model)) {
          yield chunk;
          if (chunk.type === 'done') return;
        }
      }
    } finally {
      // Also runs when the consumer stops early: aborting is what closes the HTTP stream.
      guard.dispose();
    }
  }

  async chat(req: ChatRequest): Promise<ChatResult> {
    let content = '';
    let thinking = '';
    const toolCalls: ToolCallRequest[] = [];
    let done: { usage: ChatUsage; doneReason: string; model: string } | undefined;
    for await (const chunk of this.chatStream(req)) {
      switch (chunk.type) {
        case 'thinking':
          thinking += chunk.text;
          break;
        case 'text':
          content += chunk.text;
          break;
        case 'tool_calls':
          toolCalls.push(...chunk.calls);
          break;
        case 'done':
          done = { usage: chunk.usage, doneReason: chunk.doneReason, model: chunk.model };
          break;
      }
    }
    if (done === undefined) {
      throw new LlmUnavailableError(
        'stream_incomplete',
        `Ollama at ${this.host} ended the response for model ${req.model} before it was complete; retry`,
      );
    }
    return { content, thinking, toolCalls, ...done };
  }

  showModel(model: string, signal?: AbortSignal): Promise<ModelDetails> {
    // Once per model and process: every turn and sub-agent asks, and the answer does not change
    // while navi runs. A failure is not remembered (the next turn asks again).
    let known = this.shown.get(model);
    if (known === undefined) {
      known = this.fetchModel(model, signal);
      this.shown.set(model, known);
      known.catch(() => this.shown.delete(model));
    }
    return known;
  }

  private async fetchModel(model: string, signal?: AbortSignal): Promise<ModelDetails> {
    const raw = await this.metadata('POST', '/api/show', model, signal, JSON.stringify({ model }));
    const details: ModelDetails = { name: model };
    const info: unknown = isRecord(raw) ? raw.model_info : undefined;
    if (isRecord(info)) {
      for (const [key, value] of Object.entries(info)) {
        if (key.endsWith('.context_length') && typeof value === 'number' && value > 0) {
          details.contextLength = value;
          break;
        }
      }
    }
    const capabilities: unknown = isRecord(raw) ? raw.capabilities : undefined;
    if (Array.isArray(capabilities)) {
      details.capabilities = (capabilities as unknown[]).filter((c): c is string => typeof c === 'string');
    }
    // api/types.go ShowResponse: `details.family` and `parser` (helper-think.ts reads them).
    const family: unknown = isRecord(raw) && isRecord(raw.details) ? raw.details.family : undefined;
    if (typeof family === 'string' && family !== '') details.family = family;
    const parser: unknown = isRecord(raw) ? raw.parser : undefined;
    if (typeof parser === 'string' && parser !== '') details.parser = parser;
    return details;
  }

  async listModels(signal?: AbortSignal): Promise<string[]> {
    const raw = await this.metadata('GET', '/api/tags', undefined, signal);
    return namedModels(raw).map(([name]) => name);
  }

  async runningModels(signal?: AbortSignal): Promise<RunningModel[]> {
    const raw = await this.metadata('GET', '/api/ps', undefined, signal);
    return parseRunningModels(raw);
  }

  async version(signal?: AbortSignal): Promise<string> {
    const raw = await this.metadata('GET', '/api/version', undefined, signal);
    const version: unknown = isRecord(raw) ? raw.version : undefined;
    if (typeof version !== 'string') {
      throw new LlmUnavailableError('ollama_error', `Ollama at ${this.host} answered /api/version without a version`);
    }
    return version;
  }

  /** One short request with its own timeout; the answer is returned as parsed JSON (`unknown`). */
  private async metadata(method: 'GET' | 'POST', endpoint: string, model: string | undefined, signal: AbortSignal | undefined, body?: string): Promise<unknown> {
    const guard = new RequestGuard(signal);
    const wire = newWireState();
    guard.arm('request_timeout', METADATA_TIMEOUT_S);
    try {
      const bytes = body === undefined ? undefined : Buffer.from(body);
      const parts = bytes === undefined ? undefined : { chunks: [bytes], length: bytes.length };
      return await guard.race(requestJson(this.requestOptions(guard.controller.signal, wire), this.call(method, endpoint, parts)));
    } catch (err) {
      throw toLlmError(err, {
        host: this.host,
        model,
        endpoint,
        stopCause: guard.stopCause,
        wire,
        timeoutS: METADATA_TIMEOUT_S,
      });
    } finally {
      guard.dispose();
    }
  }

  private requestOptions(signal: AbortSignal, state: WireState): { signal: AbortSignal; state: WireState; exchange?: LlmClientOptions['exchange'] } {
    return { signal, state, ...(this.opts.exchange !== undefined && { exchange: this.opts.exchange }) };
  }

  /** The request for `path`; throws `ollama_host_invalid` (exit 2) for a host that is not a URL. */
  private call(method: 'GET' | 'POST', path: string, body: BodyParts | undefined): HttpCall {
    if (this.base instanceof InvalidInputError) throw this.base;
    const url = new URL(this.base.href);
    url.pathname = `${url.pathname.replace(/\/+$/, '')}${path}`;
    return { url, method, headers: requestHeaders(url), ...(body !== undefined && { body }) };
  }
}

/** `/api/ps`'s answer (api/types.go ProcessResponse); entries or fields of the wrong type are skipped. */
export function parseRunningModels(raw: unknown): RunningModel[] {
  return namedModels(raw).map(([name, m]) => {
    const entry: RunningModel = { name };
    if (typeof m.context_length === 'number' && m.context_length > 0) entry.contextLength = m.context_length;
    if (typeof m.size === 'number') entry.size = m.size;
    if (typeof m.size_vram === 'number') entry.sizeVram = m.size_vram;
    if (typeof m.expires_at === 'string') entry.expiresAt = m.expires_at;
    return entry;
  });
}

/** The `models` of a `/api/tags` or `/api/ps` answer with their names (`name`, else `model`); others skipped. */
function namedModels(raw: unknown): Array<[string, Record<string, unknown>]> {
  const models: unknown = isRecord(raw) ? raw.models : undefined;
  if (!Array.isArray(models)) return [];
  const out: Array<[string, Record<string, unknown>]> = [];
  for (const m of models as unknown[]) {
    if (!isRecord(m)) continue;
    const name = typeof m.name === 'string' ? m.name : m.model;
    if (typeof name === 'string') out.push([name, m]);
  }
  return out;
}

/**
 * The headers the `ollama` npm client sent (and Ollama's own Go client sends): JSON both ways.
 * For ollama.com, `OLLAMA_API_KEY` is the bearer token, as both clients do it (api/client.go).
 */
function requestHeaders(url: URL): Record<string, string> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    Accept: 'application/json',
    'User-Agent': `navi (${process.platform} ${process.arch}; Node.js ${process.version})`,
  };
  const key = process.env.OLLAMA_API_KEY;
  if (url.protocol === 'https:' && url.hostname === 'ollama.com' && key !== undefined && key !== '' && url.username === '') {
    headers.Authorization = `Bearer ${key}`;
  }
  return headers;
}

/**
 * The URL requests go to: as `displayHost` reads the host (scheme, default port 11434 without a
 * scheme, `:port` on loopback), credentials kept.
 */
function baseUrl(host: string): URL | InvalidInputError {
  const parsed = parseHost(host);
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    return new InvalidInputError(
      'ollama_host_invalid',
      `invalid Ollama host '${host}'; set --ollama-host or OLLAMA_HOST to a URL like http://127.0.0.1:${DEFAULT_PORT}`,
    );
  }
  return parsed;
}

/** `host` as a URL with its port made explicit, or undefined when it is not one. */
function parseHost(host: string): URL | undefined {
  let url = host.trim();
  let explicitScheme = url.includes('://');
  if (url.startsWith(':')) {
    url = `http://127.0.0.1${url}`;
    explicitScheme = true;
  } else if (!explicitScheme) {
    url = `http://${url}`;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.port === '' && !explicitScheme) parsed.port = DEFAULT_PORT;
  parsed.search = '';
  parsed.hash = '';
  return parsed;
}

/**
 * The host as the user should read it in messages: scheme, host and port as the client will
 * use them, without any `user:password@`.
 */
export function displayHost(host: string): string {
  const parsed = parseHost(host);
  if (parsed === undefined) return host;
  const port = parsed.port !== '' ? `:${parsed.port}` : '';
  return `${parsed.protocol}//${parsed.hostname}${port}${parsed.pathname.replace(/\/+$/, '')}`;
}
