/**
 * The model as the agent sees it. The Ollama adapter (`ollama-client.ts`) implements this;
 * tests pass a scripted implementation or point the real adapter at the fake server.
 */
import type { ExchangeHooks } from './exchange-hooks.js';

export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

/** A tool call as the model produced it. `arguments` is whatever came over the wire. */
export interface ToolCallRequest {
  /** Provider id when present; otherwise assigned by the agent (`call_<n>`). */
  id?: string;
  name: string;
  /**
   * Usually an object. A string means the model sent text that is not a JSON object
   * (the agent reports it back as "invalid JSON arguments").
   */
  arguments: unknown;
}

/**
 * One message of a conversation. Read-only: the request caches (`request-body.ts`, the per-message
 * wire memo, view truncation) assume a message never changes once it has been sent; a changed
 * message is a new object.
 */
export interface ChatMessage {
  readonly role: ChatRole;
  readonly content: string;
  /**
   * Reasoning text (assistant only). Always sent back, and kept in the stored context: the
   * template decides what to render (qwen3 and gpt-oss only the turns after the last user
   * message; GLM-4.7, Cohere and Nemotron every turn's, so dropping it would re-render the
   * whole history and lose the reasoning those templates are made to keep).
   */
  readonly thinking?: string;
  readonly tool_calls?: readonly ToolCallRequest[];
  /** For role `tool`: the tool that produced this result. */
  readonly tool_name?: string;
  /** For role `tool`: the id of the call it answers (Cohere and native templates pair by id). */
  readonly tool_call_id?: string;
}

/** JSON-schema function declaration in Ollama's (OpenAI-compatible) shape. */
export interface ToolSchema {
  type: 'function';
  function: {
    name: string;
    description: string;
    parameters: Record<string, unknown>;
  };
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ToolSchema[];
  /** Ask for extended reasoning (`think: true`). */
  think: boolean;
  /** Always sent: Ollama's own default silently truncates long prompts. */
  numCtx: number;
  temperature?: number;
  keepAlive?: string | number;
  /** Stops the request, including before the first chunk arrives. */
  signal: AbortSignal;
  /**
   * Ollama's `format`: `'json'` for any JSON object (non-streaming planner calls), or a JSON
   * Schema the server constrains the reply to (`--output-schema`). Compared by identity when a
   * request body is reused (`request-body.ts`).
   */
  format?: 'json' | Record<string, unknown>;
}

/** One piece of a streamed response. */
export type ChatChunk =
  | { type: 'thinking'; text: string }
  | { type: 'text'; text: string }
  | { type: 'tool_calls'; calls: ToolCallRequest[] }
  | { type: 'done'; usage: ChatUsage; doneReason: string; model: string };

export interface ChatUsage {
  /** Real `prompt_eval_count` from Ollama (0 when the server did not report it). */
  promptTokens: number;
  /** Real `eval_count`. */
  completionTokens: number;
}

export interface ChatResult {
  content: string;
  thinking: string;
  toolCalls: ToolCallRequest[];
  usage: ChatUsage;
  doneReason: string;
  model: string;
}

export interface ModelDetails {
  name: string;
  /** Context length the model was trained for, from `/api/show` model_info, when reported. */
  contextLength?: number;
  /**
   * `/api/show` capabilities (`completion`, `tools`, `thinking`, `vision`, …); absent when the
   * server does not report them (older Ollama versions).
   */
  capabilities?: string[];
}

/**
 * A model the server has loaded (`/api/ps`, server/routes.go PsHandler; api/types.go
 * ProcessModelResponse): what the runner really has, which may differ from what was asked.
 */
export interface RunningModel {
  name: string;
  /** Context the runner loaded: `num_ctx` clamped to the model's trained context (llm/server.go). */
  contextLength?: number;
  /** Bytes of the loaded model. */
  size?: number;
  /** Bytes of it in GPU memory; less than `size` means the rest runs on the CPU. */
  sizeVram?: number;
  /** When the server unloads it (ISO 8601), as `keep_alive` set. */
  expiresAt?: string;
}

export interface LlmClient {
  /**
   * Streams one chat completion. Throws `LlmUnavailableError` (unreachable, model missing,
   * first-chunk or inter-chunk timeout, broken stream) or an AbortError when `signal` fires.
   */
  chatStream(req: ChatRequest): AsyncIterable<ChatChunk>;
  /** Non-streaming completion (planner, summariser). Same errors as `chatStream`. */
  chat(req: ChatRequest): Promise<ChatResult>;
  /** `/api/show`; throws `InvalidInputError` with code `model_not_found` (exit 2) for a model that is not pulled. */
  showModel(model: string, signal?: AbortSignal): Promise<ModelDetails>;
  /** `/api/tags`: names of pulled models. */
  listModels(signal?: AbortSignal): Promise<string[]>;
  /** `/api/version`. */
  version(signal?: AbortSignal): Promise<string>;
  /** `/api/ps`: the models the server has loaded now (the Ollama adapter; doctor reads it). */
  runningModels?(signal?: AbortSignal): Promise<RunningModel[]>;
}

export interface LlmClientOptions {
  host: string;
  /** Silence allowed before the first chunk (model load, prefill), seconds. */
  firstChunkTimeoutS: number;
  /** Silence allowed between chunks after the first, seconds. */
  chunkTimeoutS: number;
  /**
   * Which silence limits fail the call when they pass (default both). A limit that is not
   * strict only makes navi check that the server still answers (`/api/version`): Ollama sends
   * nothing while it buffers a tool call the model is still writing, so silence alone is not a
   * hang. An unanswered check fails the call; an answered one waits another interval.
   */
  strict?: { firstChunk: boolean; chunk: boolean };
  /** Longest one model call may take, start to `done`, seconds; 0 or absent: no limit. */
  callTimeoutS?: number;
  /** `--record` / `--replay`: every exchange observed, or answered from a recording (`exchange-hooks.ts`). */
  exchange?: ExchangeHooks;
  /**
   * Chat bodies made the plain way, `JSON.stringify` of the whole request every call, instead of
   * on the previous request's bytes (`request-body.ts`): the oracle the fast path is checked
   * against (the same bytes must reach the server). `NAVI_PLAIN_BODIES=1`.
   */
  plainBodies?: boolean;
}
