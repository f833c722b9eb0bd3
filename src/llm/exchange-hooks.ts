/**
 * Where `--record` and `--replay` meet the HTTP of every model call (`guarded-fetch.ts`): a
 * recorder observes each exchange on the wire (the request's bytes, the status, every streamed
 * line as it arrived); a replayer answers the request itself, with a response object that the
 * guarded fetch reads exactly as it reads a socket, so the NDJSON framing and parsing and navi's
 * chunk mapping all run as they do against a server.
 */
import type { Readable } from 'node:stream';

/** What a response head looks like to the guarded fetch: `IncomingMessage` or a replayed stand-in. */
export type ResponseHead = Readable & {
  statusCode?: number;
  statusMessage?: string;
  /** The whole body arrived (a stream cut before its end is not complete). */
  complete: boolean;
};

/** One request as it leaves navi. */
export interface ExchangeRequest {
  method: string;
  /** URL path: `/api/chat`, `/api/show`, … (the host is not part of an exchange). */
  path: string;
  /** The body's bytes (empty for a GET). */
  readonly body: Buffer;
}

/** How an exchange ended. `cancelled`: navi stopped reading (it had what it needed, or it stopped). */
export type ExchangeEnd = 'end' | 'error' | 'cancelled';

/** Told what happens to one exchange, in order; calls after the first `end` are ignored. */
export interface ExchangeObserver {
  response(status: number, statusText: string): void;
  /** One streamed line (trimmed, as received: garbage and error lines included). */
  line(raw: string): void;
  /** A whole body (non-streamed answers and error bodies). */
  body(text: string): void;
  end(how: ExchangeEnd, err?: unknown): void;
}

export interface ExchangeHooks {
  /** Watches one exchange (`--record`). */
  observe?(req: ExchangeRequest): ExchangeObserver;
  /**
   * Answers the request instead of the network (`--replay`): resolves with the response head,
   * rejects as a connection failure would, or with an `InvalidInputError` when the request is
   * not the one recorded.
   */
  send?(req: ExchangeRequest, signal: AbortSignal): Promise<ResponseHead>;
}
