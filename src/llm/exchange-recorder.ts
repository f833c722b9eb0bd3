/**
 * `--record FILE`: writes every exchange with the model server as it ends (docs/recording-format.md).
 * The file is written line by line with synchronous writes, so a run that fails, is stopped or
 * is killed keeps every exchange that finished before. Secrets are redacted (`redact`, the
 * tools' rules) in requests, streamed lines and bodies before anything reaches the file.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { describeError, InvalidInputError, printable } from '../errors.js';
import { isRecord } from '../util/guards.js';
import type { ExchangeEnd, ExchangeHooks, ExchangeObserver, ExchangeRequest } from './exchange-hooks.js';
import {
  describeRequest,
  RECORDING_FORMAT,
  RECORDING_VERSION,
  redactStream,
  type ExchangeLine,
  type Redact,
  type RecordingHeader,
  type RecordingLine,
  type ResponseRecord,
  type TimedLine,
} from './recording-format.js';

export interface RecorderOptions {
  /** Path to write (created or truncated). */
  file: string;
  /** As the user wrote it, for messages. */
  shownAs: string;
  redact: Redact;
  naviVersion: string;
  /** Milliseconds, monotonic (tests pass their own). */
  now?: () => number;
}

export interface Recorder {
  hooks: ExchangeHooks;
  /** Exchanges written so far. */
  readonly count: number;
  close(): void;
}

/** Opens the file and writes the header; an unwritable path is exit 2 naming it. */
export function createRecorder(opts: RecorderOptions): Recorder {
  const now = opts.now ?? (() => performance.now());
  let fd: number;
  try {
    fd = openSync(opts.file, 'w', 0o600);
  } catch (err) {
    throw new InvalidInputError('recording_unwritable', `--record ${printable(opts.shownAs)}: cannot write it (${describeError(err)})`);
  }
  const write = (line: RecordingLine): void => {
    writeSync(fd, `${JSON.stringify(line)}\n`);
  };
  const header: RecordingHeader = {
    type: 'header',
    format: RECORDING_FORMAT,
    version: RECORDING_VERSION,
    navi_version: opts.naviVersion,
    created_at: new Date().toISOString(),
  };
  write(header);
  const written = new Set<string>();
  let seq = 0;
  let count = 0;
  let open = true;

  const observe = (req: ExchangeRequest): ExchangeObserver => {
    const started = now();
    const since = (): number => Math.round(now() - started);
    const { record, blobs } = describeRequest(req, opts.redact);
    const order = ++seq;
    const head: Omit<ResponseRecord, 'end'> = { status: null };
    const lines: TimedLine[] = [];
    const raw: string[] = [];
    let body: string | undefined;
    let done = false;
    return {
      response(status, statusText) {
        head.status = status;
        if (statusText !== '') head.status_text = statusText;
        head.headers_ms = since();
      },
      line(text) {
        if (done) return;
        lines.push({ ms: since(), line: '' });
        raw.push(text);
      },
      body(text) {
        if (!done) body = opts.redact(text);
      },
      end(how: ExchangeEnd, err?: unknown) {
        if (done) return;
        done = true;
        // Redacted as a whole: a secret can arrive split over several lines (`redactStream`).
        const clean = redactStream(raw, opts.redact);
        for (const [i, l] of lines.entries()) l.line = clean[i] ?? '';
        const line: ExchangeLine = {
          type: 'exchange',
          seq: order,
          request: record,
          response: {
            ...head,
            ...(lines.length > 0 || record.messages !== undefined ? { lines } : {}),
            ...(body !== undefined ? { body } : {}),
            end: { how, ms: since(), ...(how === 'error' ? { error: errorInfo(err, opts.redact) } : {}) },
          },
        };
        if (!open) return;
        // Blobs first: a reader meets every id before the exchange that uses it.
        for (const [id, value] of blobs) {
          if (written.has(id)) continue;
          written.add(id);
          write({ type: 'blob', id, value });
        }
        write(line);
        count++;
      },
    };
  };

  return {
    hooks: { observe },
    get count() {
      return count;
    },
    close() {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}

/** What is kept of a failure: enough to fail the same way on replay (`exchange-replayer.ts`). */
function errorInfo(err: unknown, redact: Redact): { code?: string; message: string } {
  const code = errorCode(err);
  return { ...(code !== undefined ? { code } : {}), message: redact(describeError(err)) };
}

/** `ECONNREFUSED`, `ECONNRESET`, `ABORT_ERR`… from the error or its cause. */
export function errorCode(err: unknown): string | undefined {
  if (err instanceof Error && err.name === 'AbortError') return 'ABORT_ERR';
  for (let e: unknown = err, depth = 0; isRecord(e) && depth < 3; e = e.cause, depth++) {
    if (typeof e.code === 'string') return e.code;
  }
  return undefined;
}
