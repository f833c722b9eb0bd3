/**
 * The fake Ollama's context window, as the real server handles it since v0.30 (llama-server
 * underneath): the context a runner loads, what happens to a prompt larger than it, and what
 * `/api/ps` reports. Sources are files of github.com/ollama/ollama at v0.33 unless named.
 *
 * Tokens are counted as the fake counts them everywhere (`prompt_eval_count` defaults to
 * ceil(request bytes / 4)), so a test can size a conversation to overflow a model's window.
 */
import { DEFAULT_MODEL_SIZE, parseGoDuration, type FakeModel } from './fake-ollama-script.js';

/**
 * `num_ctx` when a request sets none. The real default depends on the GPU's memory (4096,
 * 32768 or 262144: server/routes.go 176-186); the fake takes the smallest.
 */
export const DEFAULT_NUM_CTX = 4096;

/** Ollama's default keep_alive (envconfig.KeepAlive: 5 minutes). */
const DEFAULT_KEEP_ALIVE_NS = 5 * 60 * 1e9;

/**
 * The context the runner loads: the request's `num_ctx`, clamped to the model's trained
 * context length with only a log line (llm/server.go 111-117 NewLlamaServer; server/sched.go
 * 149-167 effectiveContext), at least 4 (sched.go 170-177).
 */
export function loadedContext(model: FakeModel, body: Record<string, unknown>): number {
  const options = body.options as { num_ctx?: unknown } | undefined;
  const requested = typeof options?.num_ctx === 'number' && options.num_ctx > 0 ? Math.floor(options.num_ctx) : DEFAULT_NUM_CTX;
  const trained = model.context_length ?? model.trained_context;
  return Math.max(4, trained !== undefined && trained > 0 && requested > trained ? trained : requested);
}

/** What the server does with a prompt of `tokens` tokens in a window of `context`. */
export type PromptFit =
  | { kind: 'fits'; promptTokens: number }
  /** `truncate` absent or true: the oldest non-system messages were dropped. */
  | { kind: 'truncated'; promptTokens: number; dropped: number }
  /** `truncate: false`: llama-server refuses it; `error` is the text Ollama answers 400 with. */
  | { kind: 'overflow'; error: string };

/**
 * server/prompt.go chatPrompt 35-78: with `truncate` (default true, server/routes.go 2695)
 * messages are dropped from the front — system messages kept — until the rendered prompt fits
 * `NumCtx` (no room left for the reply), always keeping the last message; the only trace is a
 * debug log, and `prompt_eval_count` is the smaller prompt's. With `truncate: false` the prompt
 * goes to llama-server unchanged (llm/llama_server.go completionPromptForRequest), which refuses
 * it with its ERROR_TYPE_EXCEED_CONTEXT_SIZE body (llama.cpp tools/server server-context.cpp,
 * server-common.cpp format_error_response); Ollama passes that body on as the error text with
 * llama-server's status (llama_server.go 1647-1654 statusErrorMessage → routes.go streamResponse).
 */
export function fitPrompt(body: Record<string, unknown>, requestBytes: number, context: number): PromptFit {
  const tokens = Math.ceil(requestBytes / 4);
  if (tokens <= context) return { kind: 'fits', promptTokens: tokens };
  if (body.truncate === false) {
    const error = JSON.stringify({
      error: {
        code: 400,
        message: `request (${tokens} tokens) exceeds the available context size (${context} tokens), try increasing it`,
        type: 'exceed_context_size_error',
        n_prompt_tokens: tokens,
        n_ctx: context,
      },
    });
    return { kind: 'overflow', error };
  }
  const messages = Array.isArray(body.messages) ? (body.messages as unknown[]) : [];
  let bytes = requestBytes;
  let dropped = 0;
  for (let i = 0; i < messages.length - 1 && Math.ceil(bytes / 4) > context; i++) {
    if ((messages[i] as { role?: unknown } | null)?.role === 'system') continue;
    // The message and the comma that separated it from the next one.
    bytes -= Buffer.byteLength(JSON.stringify(messages[i])) + 1;
    dropped++;
  }
  // What still does not fit is cut token by token (llama_server.go context shift keeps num_keep).
  return { kind: 'truncated', promptTokens: Math.min(Math.ceil(bytes / 4), context), dropped };
}

/** A model a chat has loaded, as `/api/ps` lists it. */
export interface LoadedModel {
  model: FakeModel;
  contextLength: number;
  /** Epoch ms; `Infinity` for a negative keep_alive (kept loaded for ever). */
  expiresAt: number;
}

/**
 * When a model a chat used unloads: `keep_alive` seconds or a Go duration from now, the
 * default 5 minutes, never for a negative value, at once for 0 (server/sched.go: the runner's
 * expire timer; api/types.go Duration.UnmarshalJSON). Undefined: unloaded already.
 */
export function expiryOf(keepAlive: unknown, now: number): number | undefined {
  let ns = DEFAULT_KEEP_ALIVE_NS;
  if (typeof keepAlive === 'number') ns = keepAlive * 1e9;
  else if (typeof keepAlive === 'string') {
    const parsed = parseGoDuration(keepAlive);
    if ('ns' in parsed) ns = parsed.ns;
  }
  if (ns < 0) return Number.POSITIVE_INFINITY;
  if (ns === 0) return undefined;
  return now + ns / 1e6;
}

/**
 * One `/api/ps` entry (server/routes.go 2271-2303 PsHandler; api/types.go 835-844
 * ProcessModelResponse, fields in that order). `size_vram` below `size` is the part of the model
 * that spilled to system memory and runs on the CPU.
 */
export function psEntry(loaded: LoadedModel, details: Record<string, unknown>): Record<string, unknown> {
  const size = loaded.model.size ?? DEFAULT_MODEL_SIZE;
  const expires = Number.isFinite(loaded.expiresAt) ? new Date(loaded.expiresAt) : new Date('2318-08-21T00:00:00Z');
  return {
    name: loaded.model.name,
    model: loaded.model.name,
    size,
    digest: '0000000000000000000000000000000000000000000000000000000000000000',
    details,
    expires_at: expires.toISOString(),
    size_vram: loaded.model.size_vram ?? size,
    context_length: loaded.contextLength,
  };
}
