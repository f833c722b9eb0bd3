/**
 * What an error text from Ollama means for navi: an outage (retry later), the model's own
 * mistake (ask again), a prompt too large for the loaded context, or a request the server will
 * never accept. Pure; `ollama-errors.ts` builds the error the user sees from the class.
 *
 * Since v0.30 every GGUF model runs in an upstream llama-server, and current families parse
 * their output with Go parsers of their own, each with its own error texts (qwen3coder.go's raw
 * encoding/xml error, glm46.go, laguna.go, harmony, …): a list of *mistake* texts goes stale
 * with every release. So the rule names what IS an outage — transport, a crashed or restarting
 * runner, llama-server's own failures, out of memory, a busy server — and anything else a
 * parser emits mid-stream is the model's mistake.
 */

export type ServerErrorClass =
  /** The server or the path to it failed; asking the same again later may work (exit 75). */
  | 'outage'
  /** Ollama is busy or rate-limiting (503 "server busy", 429): certainly worth waiting out. */
  | 'busy'
  /** The model wrote something its parser could not read: ask the model again. */
  | 'model_output'
  /** The prompt does not fit the context the runner loaded (llama-server's 400). */
  | 'context_overflow'
  /** A request the server refuses whatever the timing (a 4xx): exit 2 with its reason. */
  | 'refused';

/**
 * Texts of a server that failed, not of a model that wrote something wrong. Sources (ollama
 * `llm/llama_server.go` at v0.33): "model runner has unexpectedly stopped…" (Completion, 1642:
 * the runner died or its HTTP failed), "an error was encountered while running the model"
 * (1766: the stream from llama-server broke), "llama-server process has terminated" /
 * "no longer running" / "timed out waiting for llama-server to start" (1198-1341),
 * "llama-server error:" (health, 1250), "error reading llama-server response" (1768),
 * "llama-server reported out-of-memory" (1372), "no slots available" (1263), "unexpected server
 * status" (1550); before v0.30 the same as "llama runner process has terminated". OOM texts from
 * `llm/memory.go`/ggml ("out of memory", "cudaMalloc failed", "unable to allocate",
 * "model requires more system memory"). Go's net/http transport texts when Ollama's own call to
 * the runner broke ("connection refused", "EOF", "broken pipe", "connection reset").
 * `server/sched.go` ErrMaxQueue "server busy, please try again" (503).
 */
const OUTAGE_TEXTS: readonly RegExp[] = [
  /model runner has unexpectedly stopped/i,
  /an error was encountered while running the model/i,
  /llama(?:-server| runner) process (?:has terminated|no longer running)/i,
  /timed out waiting for llama(?:-server| runner) to start/i,
  /llama-server (?:error|reported|startup failed|binary not found)/i,
  /error (?:reading|closing|unmarshalling) llama-server/i,
  /llama-server \w+ stream event exceeded/i,
  /no slots available/i,
  /unexpected server status/i,
  /server not responding/i,
  /out of memory|cudaMalloc failed|unable to allocate|failed to allocate|insufficient memory|requires more (?:system|gpu) memory/i,
  // Not "unexpected EOF" alone: encoding/xml reports a call cut short with it (qwen3coder.go).
  /connection refused|connection reset|broken pipe|forcibly closed|: EOF$|^EOF$/i,
  /context deadline exceeded/i,
  /server busy|maximum pending requests/i,
  /error loading model|failed to load model|unable to load model/i,
];

/**
 * llama-server's refusal of a prompt larger than its context (tools/server server-context.cpp,
 * ERROR_TYPE_EXCEED_CONTEXT_SIZE: "request (N tokens) exceeds the available context size (M
 * tokens), try increasing it"), passed on by Ollama with its JSON body as the error text
 * (`llm/llama_server.go` statusErrorMessage), and Ollama's own text when context shift is off
 * (`llama_server.go` 295-300: "the prompt is longer than the context length currently available
 * to the model…").
 */
const OVERFLOW_TEXT = /exceeds the available context size|exceed_context_size_error|prompt is longer than the context length/i;

/**
 * Classifies an error text. `status` is the HTTP status of an answer that failed before any
 * line, absent for an `{"error": …}` line inside a 200 stream (`server/routes.go`
 * streamResponse: the same texts arrive either way, depending on whether anything had been
 * written yet).
 */
export function classifyServerError(text: string, status?: number): ServerErrorClass {
  if (OVERFLOW_TEXT.test(text)) return 'context_overflow';
  if (status === 503 || status === 429 || /server busy|maximum pending requests/i.test(text)) return 'busy';
  if (status !== undefined && status >= 400 && status < 500) {
    // 408 and 425 are a proxy's or a server's "try again", not a verdict on the request.
    return status === 408 || status === 425 ? 'outage' : 'refused';
  }
  if (isOutageText(text)) return 'outage';
  // Not Ollama at all: a proxy's HTML page, or a gateway that could not reach it.
  if (status !== undefined && (status !== 500 || text.trimStart().startsWith('<'))) return 'outage';
  return 'model_output';
}

/** True for a text of a failed runner or transport (OUTAGE_TEXTS). */
export function isOutageText(text: string): boolean {
  return OUTAGE_TEXTS.some((re) => re.test(text));
}

/** Prompt and context sizes named in an overflow text, when it names them. */
export interface OverflowSizes {
  promptTokens?: number;
  contextTokens?: number;
}

/**
 * The numbers of llama-server's overflow error: its JSON fields `n_prompt_tokens` and `n_ctx`
 * when the body came whole, else the "request (N tokens) … context size (M tokens)" sentence.
 */
export function overflowSizes(text: string): OverflowSizes {
  const sizes: OverflowSizes = {};
  const sentence = /request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)/i.exec(text);
  const prompt = /"n_prompt_tokens"\s*:\s*(\d+)/.exec(text)?.[1] ?? sentence?.[1];
  const context = /"n_ctx"\s*:\s*(\d+)/.exec(text)?.[1] ?? sentence?.[2];
  if (prompt !== undefined) sizes.promptTokens = Number(prompt);
  if (context !== undefined) sizes.contextTokens = Number(context);
  return sizes;
}

/**
 * The readable part of an error text that may be llama-server's JSON body
 * (`{"error":{"code":400,"message":"…","type":"…"}}`): its `message`, else the text as it is.
 */
export function readableServerText(text: string): string {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) return text;
  try {
    const parsed: unknown = JSON.parse(trimmed);
    const inner = (parsed as { error?: unknown } | null)?.error;
    const message = typeof inner === 'object' && inner !== null ? (inner as { message?: unknown }).message : inner;
    return typeof message === 'string' && message !== '' ? message : text;
  } catch {
    return text;
  }
}
