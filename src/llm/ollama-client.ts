/**
 * The `LlmClient` on top of the `ollama` npm client (0.6.x). The client does the request
 * building and NDJSON parsing; navi supplies the HTTP (`guarded-fetch.ts`) so that stop and the
 * streaming timeouts cut the connection at any moment, including during a silent prefill.
 */
import type { ChatResponse, Config, Ollama } from 'ollama';
import { InvalidInputError, LlmUnavailableError } from '../errors.js';
import { isRecord } from '../util/guards.js';
import { createGuardedFetch, newWireState, type BodyParts, type WireState } from './guarded-fetch.js';
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

type OllamaConstructor = new (config?: Partial<Config>) => Ollama;

/** Creates the Ollama adapter. Cheap: the `ollama` package is loaded on the first call. */
export function createOllamaClient(opts: LlmClientOptions): LlmClient {
  return new OllamaAdapter(opts);
}

class OllamaAdapter implements LlmClient {
  private readonly opts: LlmClientOptions;
  /** Host as written in messages: scheme, host and port, never credentials. */
  private readonly host: string;
  private ctor: Promise<OllamaConstructor> | undefined;
  /** Chat bodies built on the previous request's bytes. */
  private readonly bodies = new ChatBodies();
  /** `/api/show` answers by model name. */
  private readonly shown = new Map<string, Promise<ModelDetails>>();

  constructor(opts: LlmClientOptions) {
    this.opts = opts;
    this.host = displayHost(opts.host);
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
      let iterator: AsyncIterator<ChatResponse>;
      try {
        guard.limitTotal(this.opts.callTimeoutS ?? 0);
        // Real Ollama sends no headers until the first chunk exists (model loaded, prompt
        // prefilled, and — for a model that starts with a tool call — the whole call written),
        // so this timer covers connecting, waiting for headers and waiting for the first line.
        guard.arm('first_chunk_timeout', timeoutS, strict.firstChunk ? undefined : alive);
        const ollama = await guard.race(this.open(guard.controller.signal, wire, true, this.opts.plainBodies ? plainChatBody(req) : this.bodies.build(req)));
        // The body on the wire is `chatRequestJson(req)`; the client is given only what it reads
        // itself (`stream`, and `messages` for images, which navi never sends).
        const stream = await guard.race(ollama.chat({ model: req.model, stream: true }));
        iterator = stream[Symbol.asyncIterator]();
      } catch (err) {
        throw fail(err);
      }

      for (let first = true; ; first = false) {
        let next: IteratorResult<ChatResponse>;
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
          // The client throws before this on a stream without `done`; kept for safety.
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
    const raw = await this.metadata('/api/show', model, signal, (o) => o.show({ model }));
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
    return details;
  }

  async listModels(signal?: AbortSignal): Promise<string[]> {
    const raw = await this.metadata('/api/tags', undefined, signal, (o) => o.list());
    const models: unknown = isRecord(raw) ? raw.models : undefined;
    if (!Array.isArray(models)) return [];
    const names: string[] = [];
    for (const m of models as unknown[]) {
      if (!isRecord(m)) continue;
      const name = typeof m.name === 'string' ? m.name : m.model;
      if (typeof name === 'string') names.push(name);
    }
    return names;
  }

  async runningModels(signal?: AbortSignal): Promise<RunningModel[]> {
    const raw = await this.metadata('/api/ps', undefined, signal, (o) => o.ps());
    return parseRunningModels(raw);
  }

  async version(signal?: AbortSignal): Promise<string> {
    const raw = await this.metadata('/api/version', undefined, signal, (o) => o.version());
    const version: unknown = isRecord(raw) ? raw.version : undefined;
    if (typeof version !== 'string') {
      throw new LlmUnavailableError('ollama_error', `Ollama at ${this.host} answered /api/version without a version`);
    }
    return version;
  }

  /** One short request with its own timeout; the answer is returned unparsed (`unknown`). */
  private async metadata(
    endpoint: string,
    model: string | undefined,
    signal: AbortSignal | undefined,
    call: (ollama: Ollama) => Promise<unknown>,
  ): Promise<unknown> {
    const guard = new RequestGuard(signal);
    const wire = newWireState();
    guard.arm('request_timeout', METADATA_TIMEOUT_S);
    try {
      const ollama = await guard.race(this.open(guard.controller.signal, wire, false));
      return await guard.race(call(ollama));
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

  /**
   * A client instance per request, because the fetch it holds is bound to that request's
   * signal and wire state (construction is a few field assignments).
   */
  private async open(signal: AbortSignal, wire: WireState, ndjson: boolean, body?: BodyParts): Promise<Ollama> {
    // Loaded on first use: importing this module must stay cheap for CLI start-up.
    this.ctor ??= import('ollama').then((m) => m.Ollama);
    const Ctor = await this.ctor;
    try {
      return new Ctor({
        host: this.opts.host,
        fetch: createGuardedFetch({ signal, state: wire, ndjson, ...(body !== undefined && { body }), ...(this.opts.exchange !== undefined && { exchange: this.opts.exchange }) }),
      });
    } catch (err) {
      throw new InvalidInputError(
        'ollama_host_invalid',
        `invalid Ollama host '${this.opts.host}'; set --ollama-host or OLLAMA_HOST to a URL like http://127.0.0.1:${DEFAULT_PORT}`,
        { cause: err },
      );
    }
  }
}

/** `/api/ps`'s answer (api/types.go ProcessResponse); entries or fields of the wrong type are skipped. */
export function parseRunningModels(raw: unknown): RunningModel[] {
  const models: unknown = isRecord(raw) ? raw.models : undefined;
  if (!Array.isArray(models)) return [];
  const out: RunningModel[] = [];
  for (const m of models as unknown[]) {
    if (!isRecord(m)) continue;
    const name = typeof m.name === 'string' ? m.name : m.model;
    if (typeof name !== 'string') continue;
    const entry: RunningModel = { name };
    if (typeof m.context_length === 'number' && m.context_length > 0) entry.contextLength = m.context_length;
    if (typeof m.size === 'number') entry.size = m.size;
    if (typeof m.size_vram === 'number') entry.sizeVram = m.size_vram;
    if (typeof m.expires_at === 'string') entry.expiresAt = m.expires_at;
    out.push(entry);
  }
  return out;
}

/**
 * The host as the user should read it in messages: scheme, host and port as the client will
 * use them, without any `user:password@`.
 */
export function displayHost(host: string): string {
  let url = host.trim();
  let explicitScheme = url.includes('://');
  if (url.startsWith(':')) {
    url = `http://127.0.0.1${url}`;
    explicitScheme = true;
  } else if (!explicitScheme) {
    url = `http://${url}`;
  }
  try {
    const parsed = new URL(url);
    const port = parsed.port !== '' ? `:${parsed.port}` : explicitScheme ? '' : `:${DEFAULT_PORT}`;
    const path = parsed.pathname.replace(/\/+$/, '');
    return `${parsed.protocol}//${parsed.hostname}${port}${path}`;
  } catch {
    return host;
  }
}
