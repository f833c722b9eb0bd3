/**
 * The fake Ollama server's script format and the wire lines it produces. JSON-serialisable so
 * the same script drives in-process tests, the standalone `fake-ollama-cli.ts` and benchmarks.
 */

/** A model the fake serves; any other name gets Ollama's 404. */
export interface FakeModel {
  name: string;
  /** Reported by `/api/show` as `model_info["<arch>.context_length"]`; omitted when absent. */
  context_length?: number;
  /** `/api/show` capabilities; default `['completion', 'tools', 'thinking']`. */
  capabilities?: string[];
}

export interface FakeScript {
  /** Default `[{name: 'qwen3:8b', context_length: 40960}]`. */
  models?: FakeModel[];
  /** Served in order to successive `/api/chat` calls. */
  turns: FakeTurn[];
  /** When the turns run out: `'done'` (default) answers a plain text `done.` turn, `'error'` a 500. */
  on_exhausted?: 'done' | 'error';
  /** `/api/version`; default `0.12.0`. */
  version?: string;
}

export interface FakeToolCall {
  name: string;
  /** An object, or a string to simulate a model that produced invalid JSON. */
  arguments: unknown;
  /** Sent as `tool_calls[].id` when set (newer Ollama versions send ids). */
  id?: string;
}

export interface FakeTurn {
  thinking?: string;
  content?: string;
  tool_calls?: FakeToolCall[];
  /** Split thinking and content into chunks of N characters; default 8. */
  chunk_size?: number;
  /** Delay before the headers, like real Ollama during model load and prefill. */
  first_chunk_delay_ms?: number;
  /** Delay between chunks. */
  chunk_delay_ms?: number;
  /** Stop sending after N lines but keep the socket open (0: headers only, no line). */
  stall_after_chunks?: number;
  /** Destroy the socket after N lines. */
  drop_after_chunks?: number;
  /** Send `{"error": error_line}` after the first `error_after_chunks` lines and end. */
  error_line?: string;
  /** Lines sent before `error_line` or the garbage; default 1. */
  error_after_chunks?: number;
  /** Answer with this status and `{"error": error_message}` (404: Ollama's model-not-found text). */
  http_status?: number;
  /** Message for `http_status`; default per status. */
  error_message?: string;
  /** With `http_status`: send this raw body as `text/html` instead of JSON (a proxy's error page). */
  error_body_text?: string;
  /** End the stream without the `done: true` line. */
  no_done?: boolean;
  /** Send non-JSON lines after the first `error_after_chunks` lines. */
  garbage?: boolean;
  /** Default: ceil(request body bytes / 4). */
  prompt_eval_count?: number;
  /** Default: ceil(output characters / 4). */
  eval_count?: number;
  /** Default `stop`. */
  done_reason?: string;
  /** After the scripted thinking, keep streaming thinking chunks until the client disconnects. */
  endless_thinking?: boolean;
  /** Tool names the request should offer; a difference is recorded in `fake.mismatches`. */
  expect_tools?: string[];
}

export const DEFAULT_MODELS: FakeModel[] = [{ name: 'qwen3:8b', context_length: 40960 }];

/** The turn served once the script runs out (`on_exhausted: 'done'`). */
export const EXHAUSTED_TURN: FakeTurn = { content: 'done.' };

/** Ollama's chunking is per token; 8 characters gives several chunks for short test texts. */
const DEFAULT_CHUNK_SIZE = 8;

/** `message.tool_calls` exactly as Ollama sends it: one chunk, `function.index` per call. */
export function wireToolCalls(calls: FakeToolCall[]): Array<Record<string, unknown>> {
  return calls.map((call, index) => ({
    ...(call.id !== undefined ? { id: call.id } : {}),
    function: { index, name: call.name, arguments: call.arguments },
  }));
}

/** The `message` objects of a turn's non-final lines, in Ollama's order. */
export function turnMessages(turn: FakeTurn): Array<Record<string, unknown>> {
  const size = Math.max(1, turn.chunk_size ?? DEFAULT_CHUNK_SIZE);
  const messages: Array<Record<string, unknown>> = [];
  for (const piece of split(turn.thinking ?? '', size)) {
    messages.push({ role: 'assistant', content: '', thinking: piece });
  }
  for (const piece of split(turn.content ?? '', size)) {
    messages.push({ role: 'assistant', content: piece });
  }
  if (turn.tool_calls !== undefined && turn.tool_calls.length > 0) {
    messages.push({ role: 'assistant', content: '', tool_calls: wireToolCalls(turn.tool_calls) });
  }
  return messages;
}

/** The counts and timings of the final line. */
export function doneFields(turn: FakeTurn, requestBytes: number): Record<string, unknown> {
  const outputChars =
    (turn.thinking ?? '').length +
    (turn.content ?? '').length +
    (turn.tool_calls !== undefined ? JSON.stringify(wireToolCalls(turn.tool_calls)).length : 0);
  return {
    done: true,
    done_reason: turn.done_reason ?? 'stop',
    total_duration: 1_000_000,
    load_duration: 100_000,
    prompt_eval_count: turn.prompt_eval_count ?? Math.ceil(requestBytes / 4),
    prompt_eval_duration: 500_000,
    eval_count: turn.eval_count ?? Math.ceil(outputChars / 4),
    eval_duration: 400_000,
  };
}

/** Ollama's architecture prefix for `model_info` keys (`qwen3:8b` → `qwen3`). */
export function architectureOf(model: string): string {
  const base = model.split(':')[0] ?? model;
  return base.replace(/[^a-z0-9]/gi, '').toLowerCase() || 'llama';
}

/** `details` of `/api/tags` and `/api/show` entries. */
export function modelDetails(arch: string): Record<string, unknown> {
  return {
    parent_model: '',
    format: 'gguf',
    family: arch,
    families: [arch],
    parameter_size: '8.2B',
    quantization_level: 'Q4_K_M',
  };
}

/** One `/api/tags` entry. */
export function tagEntry(model: FakeModel): Record<string, unknown> {
  return {
    name: model.name,
    model: model.name,
    modified_at: new Date(0).toISOString(),
    size: 5_200_000_000,
    digest: 'sha256:0000000000000000000000000000000000000000000000000000000000000000',
    details: modelDetails(architectureOf(model.name)),
  };
}

function split(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}
