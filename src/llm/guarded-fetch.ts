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
}

/** Builds the `fetch` for one request; see the module comment for what it guards against. */
export function createGuardedFetch(opts: GuardedFetchOptions): typeof fetch {
  const { signal, state, ndjson } = opts;
  return async (input, init) => {
    const response = await fetch(input, { ...init, signal: linkSignal(signal, init?.signal) });
    state.gotResponse = true;
    if (!response.ok) {
      throw new HttpStatusError(response.status, await readErrorBody(response));
    }
    if (!ndjson || response.body === null) return response;
    return new Response(response.body.pipeThrough(ndjsonGuard(state)), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
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
async function readErrorBody(response: Response): Promise<string> {
  const fallback = `${response.status} ${response.statusText}`.trim();
  const text = await response.text();
  const trimmed = text.trim();
  if (trimmed === '') return fallback;
  try {
    const parsed: unknown = JSON.parse(trimmed);
    if (isRecord(parsed) && parsed.error !== undefined) {
      return typeof parsed.error === 'string' ? parsed.error : JSON.stringify(parsed.error);
    }
  } catch {
    // Not JSON (a proxy's HTML page, a plain-text 502): fall through to the first line.
  }
  return excerpt(trimmed.split('\n')[0] ?? fallback);
}

/**
 * Splits the body into lines and passes on only JSON objects, one per line. A line that is not
 * JSON becomes a marked error line and ends the stream; `{"error": …}` and `done` are recorded.
 */
function ndjsonGuard(state: WireState): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let buffer = '';
  let stopped = false;

  const handle = (line: string, controller: TransformStreamDefaultController<Uint8Array>): void => {
    const trimmed = line.trim();
    if (stopped || trimmed === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      parsed = undefined;
    }
    if (!isRecord(parsed)) {
      state.invalidLine = excerpt(trimmed);
      stopped = true;
      controller.enqueue(encoder.encode(`${JSON.stringify({ error: INVALID_LINE_MARKER })}\n`));
      controller.terminate();
      return;
    }
    if (parsed.error !== undefined) {
      const message = typeof parsed.error === 'string' ? parsed.error : JSON.stringify(parsed.error);
      state.streamError = message;
      stopped = true;
      controller.enqueue(encoder.encode(`${JSON.stringify({ error: message })}\n`));
      controller.terminate();
      return;
    }
    if (parsed.done === true) state.sawDone = true;
    controller.enqueue(encoder.encode(`${trimmed}\n`));
  };

  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      // Only the new text is searched for line ends: re-splitting the whole buffer on every
      // chunk made a long line (a 20 MB tool argument) cost time quadratic in its length.
      const text = decoder.decode(chunk, { stream: true });
      let start = 0;
      for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
        handle(buffer + text.slice(start, nl), controller);
        buffer = '';
        start = nl + 1;
      }
      buffer += text.slice(start);
    },
    flush(controller) {
      buffer += decoder.decode();
      handle(buffer, controller);
      buffer = '';
      state.bodyEnded = true;
    },
  });
}

function excerpt(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ');
  return oneLine.length > EXCERPT_CHARS ? `${oneLine.slice(0, EXCERPT_CHARS)}…` : oneLine;
}

/** Narrowing helper for JSON from the wire. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
