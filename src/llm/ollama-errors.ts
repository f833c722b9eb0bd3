/**
 * Turns whatever a failed Ollama call threw into what the user should see: an `AbortError` when
 * the caller stopped it; a `ModelOutputError` when the model wrote something Ollama could not
 * parse or the server cut its reply off (asked again, model-call.ts); a `ContextOverflowError`
 * when the prompt does not fit the loaded context; an `InvalidInputError` (exit 2) for a request
 * the server refuses outright; otherwise one `LlmUnavailableError` line (exit 75) naming the
 * host, the model and what to do next. The wire state recorded by the guarded fetch decides the
 * ambiguous cases, because the client reports most of them as a plain `Error`;
 * `server-error-class.ts` reads Ollama's texts.
 */
import { InvalidInputError, LlmUnavailableError, ModelOutputError, NaviError, describeError } from '../errors.js';
import { HttpStatusError, type WireState } from './guarded-fetch.js';
import type { StopCause } from './request-guard.js';
import { classifyServerError, isOutageText, overflowSizes, readableServerText, type OverflowSizes } from './server-error-class.js';

/**
 * The prompt does not fit the context the runner really loaded: llama-server refused it (navi
 * sends `truncate: false`, so Ollama no longer drops the oldest messages silently). Not an
 * outage — asking the same again cannot fit — so not exit 75: the turn can compress and ask
 * again; until it does, the run ends with exit 1, like `context_too_large`.
 */
export class ContextOverflowError extends NaviError {
  /** Tokens of the refused prompt, when the server said. */
  readonly promptTokens: number | undefined;
  /** Tokens of the context the runner loaded, when the server said. */
  readonly contextTokens: number | undefined;

  constructor(message: string, sizes: OverflowSizes, options?: { cause?: unknown }) {
    super('error', 'context_overflow', message, options);
    this.name = 'ContextOverflowError';
    this.promptTokens = sizes.promptTokens;
    this.contextTokens = sizes.contextTokens;
  }
}

/**
 * `LlmUnavailableError` codes of a trouble that passes: a server restarting (refused, dropped
 * mid-reply, gone silent), busy, or a runner that crashed and is reloaded on the next request.
 * What `callModelPatiently` (agent/model-call.ts) waits out; timeouts the user set and a host
 * that does not resolve are not in it.
 */
export const TRANSIENT_OUTAGE_CODES: ReadonlySet<string> = new Set([
  'ollama_unreachable',
  'stream_incomplete',
  'ollama_unresponsive',
  'ollama_busy',
  'runner_failed',
]);

/** True for an outage worth waiting out (see TRANSIENT_OUTAGE_CODES). */
export function isTransientOutage(err: unknown): err is LlmUnavailableError {
  return err instanceof LlmUnavailableError && TRANSIENT_OUTAGE_CODES.has(err.code);
}

/** What the mapper needs to know about the failed call. */
export interface FailureContext {
  /** Host as shown to the user (`http://127.0.0.1:11434`). */
  host: string;
  /** Model of the call; absent for `/api/tags` and `/api/version`. */
  model?: string;
  /** API path, for messages about metadata calls (`/api/show`). */
  endpoint: string;
  stopCause: StopCause | undefined;
  wire: WireState;
  /** Seconds of the timer that fired, for the message. */
  timeoutS: number;
}

/** The client's text when a stream ends without a `done` line (ollama 0.6.4). */
const NO_DONE_MESSAGE = 'Did not receive done or success response in stream.';

/** Connection-level error codes that mean "nothing is listening there / the route is broken". */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'ECONNRESET',
  'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

/** Maps `err` to the error the caller should see (an `AbortError` or an `LlmUnavailableError`). */
export function toLlmError(err: unknown, ctx: FailureContext): Error {
  const { host, wire } = ctx;
  const model = ctx.model ?? '';

  switch (ctx.stopCause) {
    case 'caller':
      // The platform's own abort error; the caller keeps its signal's reason if it needs one.
      return new DOMException('the Ollama request was aborted', 'AbortError');
    case 'first_chunk_timeout':
      return new LlmUnavailableError(
        'first_chunk_timeout',
        `no response from Ollama at ${host} for model ${model} within ${ctx.timeoutS} s (first chunk); ` +
          'raise llm.first_chunk_timeout_s or LLM_STREAM_FIRST_CHUNK_TIMEOUT',
      );
    case 'chunk_timeout':
      return new LlmUnavailableError(
        'chunk_timeout',
        `Ollama at ${host} stopped streaming model ${model}: no chunk within ${ctx.timeoutS} s; ` +
          'raise llm.chunk_timeout_s or LLM_STREAM_CHUNK_TIMEOUT',
      );
    case 'call_timeout':
      return new LlmUnavailableError(
        'call_timeout',
        `Ollama at ${host} did not finish the answer of model ${model} within ${ctx.timeoutS} s (llm.call_timeout_s); ` +
          'raise llm.call_timeout_s (0: no limit) if the model is slow rather than stuck',
      );
    case 'unresponsive':
      return new LlmUnavailableError(
        'ollama_unresponsive',
        `Ollama at ${host} stopped answering: model ${model} was silent for ${ctx.timeoutS} s and /api/version got no answer; ` +
          'is `ollama serve` still running?',
      );
    case 'request_timeout':
      return new LlmUnavailableError(
        'request_timeout',
        `no answer from Ollama at ${host} to ${ctx.endpoint} within ${ctx.timeoutS} s; is it overloaded or stuck?`,
      );
    case undefined:
      break;
  }

  if (err instanceof NaviError) return err;
  if (err instanceof HttpStatusError) return fromHttpStatus(err, ctx);

  if (wire.invalidLine !== undefined) {
    return new LlmUnavailableError(
      'ollama_error',
      `Ollama at ${host} sent a line that is not JSON${forModel(model)}: "${wire.invalidLine}"; ` +
        'does --ollama-host / OLLAMA_HOST point at Ollama itself?',
      { cause: err },
    );
  }
  if (wire.streamError !== undefined) {
    const kind = classifyServerError(wire.streamError);
    if (kind === 'model_output') return malformedToolCall(wire.streamError, ctx, err);
    if (kind === 'context_overflow') return contextOverflow(wire.streamError, ctx, err);
    return new LlmUnavailableError(
      kind === 'busy' ? 'ollama_busy' : 'runner_failed',
      `Ollama at ${host} failed mid-response${forModel(model)}: ${oneLine(wire.streamError)}`,
      { cause: err },
    );
  }

  const code = networkCode(err);
  if (wire.gotResponse && code === undefined && endedCleanlyWithoutDone(err, wire)) {
    // llm/llama_server.go 1690-1703: after 31 identical tokens in a row (whitespace included)
    // Completion returns ctx.Err(), which is nil, and ChatHandler closes the 200 body with
    // neither a `done` line nor an error. The server is fine; the model was looping.
    return new ModelOutputError(
      'reply_cut_off',
      `Ollama ended the reply of model ${model} without finishing it (a 200 body with no done line: ` +
        'the server stops a model that repeats the same token over and over)',
      { cause: err },
    );
  }
  if (wire.gotResponse && (code !== undefined || isIncomplete(err, wire))) {
    return new LlmUnavailableError(
      'stream_incomplete',
      `Ollama at ${host} ended the response${forModel(model)} before it was complete` +
        `${code !== undefined ? ` (${code})` : ''}; retry, and check the Ollama server log if it repeats`,
      { cause: err },
    );
  }
  if (code !== undefined || isFetchFailure(err)) {
    return new LlmUnavailableError(
      'ollama_unreachable',
      `cannot reach Ollama at ${host} (${code ?? causeMessage(err)}); is \`ollama serve\` running? ` +
        'set --ollama-host or OLLAMA_HOST',
      { cause: err },
    );
  }
  if (err instanceof SyntaxError) {
    return new LlmUnavailableError(
      'ollama_error',
      `Ollama at ${host} answered ${ctx.endpoint} with something that is not JSON; ` +
        'does --ollama-host / OLLAMA_HOST point at Ollama itself?',
      { cause: err },
    );
  }
  return new LlmUnavailableError(
    'ollama_error',
    `Ollama at ${host} failed${forModel(model)}: ${describeError(err)}`,
    { cause: err },
  );
}

/**
 * A parser's error: server/routes.go ChatHandler sends a built-in parser's error as
 * `{"error": …}`, ending the stream (or as the HTTP 500 body when nothing was sent yet). Texts
 * of today's parsers: harmony "error parsing tool call: raw='…', err=…"; qwen3.go "failed to
 * parse JSON: …"; qwen3coder.go (also qwen3.5/3.8 and nemotron) the raw encoding/xml error "XML
 * syntax error on line N: …"; glm46.go "incomplete GLM tool call", "tool %q is not declared",
 * "required argument %q is missing for tool %q"; laguna.go "failed to parse Laguna JSON tool
 * call…"; llama_server.go (native mode) "llama-server returned invalid tool call arguments".
 * Recognised as "not an outage" (server-error-class.ts), never by this list.
 */
function malformedToolCall(serverMessage: string, ctx: FailureContext, cause: unknown): ModelOutputError {
  return new ModelOutputError(
    'malformed_tool_call',
    `model ${ctx.model ?? ''} wrote a tool call Ollama could not parse (${oneLine(serverMessage)})`,
    { cause },
  );
}

function contextOverflow(serverMessage: string, ctx: FailureContext, cause: unknown): ContextOverflowError {
  const sizes = overflowSizes(serverMessage);
  const prompt = sizes.promptTokens !== undefined ? ` (${sizes.promptTokens} tokens)` : '';
  const window = sizes.contextTokens !== undefined ? ` of ${sizes.contextTokens} tokens` : '';
  return new ContextOverflowError(
    `the conversation${prompt} no longer fits the context window${window} that Ollama at ${ctx.host} loaded for model ${ctx.model ?? ''} ` +
      `(${oneLine(readableServerText(serverMessage))}); start a new session, or raise llm.num_ctx if the model supports it`,
    sizes,
    { cause },
  );
}

function fromHttpStatus(err: HttpStatusError, ctx: FailureContext): NaviError {
  const { host } = ctx;
  const model = ctx.model ?? '';
  const message = oneLine(err.serverMessage);
  const kind = classifyServerError(err.serverMessage, err.status);
  if (kind === 'context_overflow') return contextOverflow(err.serverMessage, ctx, err);
  if (err.status === 404 && /model/i.test(message) && /not found/i.test(message) && model !== '') {
    // Not an outage: retrying cannot bring the model (exit 2, like the capability refusals below).
    return new InvalidInputError(
      'model_not_found',
      `model '${model}' is not pulled on ${host}; run: ollama pull ${model} (or choose another with --model or llm.model)`,
      { cause: err },
    );
  }
  // Capability refusals (server/routes.go ChatHandler): retrying later cannot help, the
  // configuration must change — exit 2, not 75.
  if (/does not support thinking/i.test(message)) {
    return new InvalidInputError(
      'model_no_thinking',
      `model '${model}' does not support thinking (Ollama at ${host}: ${message}); ` +
        'set llm.think: false, or think_enabled: false in the profile',
      { cause: err },
    );
  }
  if (/does not support tools/i.test(message)) {
    return new InvalidInputError('model_no_tools', noToolsMessage(model, `Ollama at ${host}: ${message}`), { cause: err });
  }
  if (err.status === 404) {
    return new LlmUnavailableError(
      'ollama_error',
      `Ollama at ${host} answered 404 for ${ctx.endpoint} (${message}); ` +
        'does --ollama-host / OLLAMA_HOST point at an Ollama server?',
      { cause: err },
    );
  }
  // Only a chat streams a model's output; a 500 from /api/show is the server's.
  if (kind === 'model_output' && ctx.endpoint === '/api/chat') return malformedToolCall(err.serverMessage, ctx, err);
  if (kind === 'refused') {
    // An option of the wrong type, "does not support chat", a bad think value, top_logprobs
    // out of range (api/types.go, server/routes.go ChatHandler): the same request fails the same
    // way later, so not exit 75 — a loop runner that retries on 75 would retry for ever.
    return new InvalidInputError(
      'ollama_rejected',
      `Ollama at ${host} refused the request${forModel(model)} (HTTP ${err.status}): ${message}; ` +
        'check the llm settings and the profile (retrying cannot help)',
      { cause: err },
    );
  }
  const code = kind === 'busy' ? 'ollama_busy' : isOutageText(err.serverMessage) ? 'runner_failed' : 'ollama_error';
  return new LlmUnavailableError(
    code,
    `Ollama at ${host} returned HTTP ${err.status}${forModel(model)}: ${message}`,
    { cause: err },
  );
}

function forModel(model: string): string {
  return model === '' ? '' : ` for model ${model}`;
}

/** Characters of a server's error message worth showing. */
const MAX_ERROR_CHARS = 300;

/** A server's error text as one short line: a proxy or a broken server may send megabytes. */
function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > MAX_ERROR_CHARS ? `${line.slice(0, MAX_ERROR_CHARS)}…` : line;
}

/**
 * The body ended as HTTP says a body ends (the chunked terminator arrived, no socket error) but
 * no `done` line came: the server closed it on purpose. A connection dropped mid-body never
 * sets `bodyEnded` (guarded-fetch.ts: Node reports it as incomplete).
 */
function endedCleanlyWithoutDone(err: unknown, wire: WireState): boolean {
  return wire.bodyEnded && !wire.sawDone && wire.streamError === undefined && wire.invalidLine === undefined &&
    (!(err instanceof Error) || err.message === NO_DONE_MESSAGE || err.message === STREAM_ENDED_WITHOUT_DONE);
}

/** The adapter's own text when the client's iterator ends before a `done` line. */
export const STREAM_ENDED_WITHOUT_DONE = 'stream ended without done';

function isIncomplete(err: unknown, wire: WireState): boolean {
  return (err instanceof Error && err.message === NO_DONE_MESSAGE) || (wire.bodyEnded && !wire.sawDone);
}

/** undici reports network failures as `TypeError: fetch failed` (or `terminated` mid-body). */
function isFetchFailure(err: unknown): boolean {
  return err instanceof TypeError && (err.message === 'fetch failed' || err.message === 'terminated');
}

/** The first errno-style code along the `cause` chain (and inside an `AggregateError`). */
function networkCode(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return code;
    if (current instanceof AggregateError) {
      for (const inner of current.errors) {
        const innerCode = networkCode(inner);
        if (innerCode !== undefined) return innerCode;
      }
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function causeMessage(err: unknown): string {
  const cause = err instanceof Error ? err.cause : undefined;
  return describeError(cause ?? err);
}

/** What to tell a user whose model cannot call tools: navi's agent is nothing without them. */
export function noToolsMessage(model: string, evidence: string): string {
  return (
    `model '${model}' cannot call tools (${evidence}), and navi's agent works through tools; ` +
    'choose a tool-capable model with --model or llm.model (for example qwen3:8b, gpt-oss:20b or llama3.1:8b; ' +
    '`ollama show MODEL` lists "tools" under Capabilities)'
  );
}
