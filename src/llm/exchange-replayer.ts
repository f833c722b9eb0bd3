/**
 * `--replay FILE`: answers every model request from a recording, with no network at all. Chat
 * requests are matched strictly in order — the first one that differs from what was recorded
 * ends the run with exit 2, naming it and showing what changed (`request-diff.ts`): a prompt,
 * profile or tool change shows up as a diff, not as a flaky model. Metadata requests
 * (`/api/show`, `/api/tags`, `/api/version`) are looked up by content, since their order
 * depends on caching and timing rather than on the run.
 *
 * The answer is a stream that the guarded fetch reads like a socket: the recorded lines go
 * through the same framing, parsing and chunk mapping as a live answer. With `timing`
 * the head and each line arrive when they did; without it, at once. A mismatch is sticky: a
 * caller that swallows one failed request (compression falls back to truncation) meets it again
 * on the next request, and `finish()` reports it at the end of the run.
 */
import { Readable } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { InvalidInputError, printable } from '../errors.js';
import type { ExchangeHooks, ExchangeRequest, ResponseHead } from './exchange-hooks.js';
import { describeRequest, isChatRecord, type Redact, type TimedLine } from './recording-format.js';
import type { RecordedExchange, Recording } from './recording-read.js';
import { requestDiff } from './request-diff.js';

export interface ReplayerOptions {
  recording: Recording;
  redact: Redact;
  /** Honour the recorded timing (`--replay-timing`). */
  timing: boolean;
}

export interface Replayer {
  hooks: ExchangeHooks;
  /** Throws the mismatch, or an `InvalidInputError` when recorded chat exchanges were never asked for. */
  finish(): void;
}

/** Where a recorded line says the answer was complete (the consumer stops reading there). */
function hasDone(lines: readonly TimedLine[]): boolean {
  return lines.some((l) => /"done"\s*:\s*true/.test(l.line));
}

export function createReplayer(opts: ReplayerOptions): Replayer {
  const { recording, redact, timing } = opts;
  const file = printable(recording.file);
  const chats = recording.exchanges.filter((e) => isChatRecord(e.request));
  const others = recording.exchanges.filter((e) => !isChatRecord(e.request));
  const usedOthers = new Set<RecordedExchange>();
  let nextChat = 0;
  let requests = 0;
  let failure: InvalidInputError | null = null;

  /** A metadata request that was not recorded: reported at the end unless a model call fails first (with the better diff). */
  let metadataFailure: InvalidInputError | null = null;
  const error = (message: string): InvalidInputError =>
    new InvalidInputError('replay_mismatch', `--replay ${file}: ${message}\n  If the change is intended, record again: --record ${file}`);
  const mismatch = (message: string): InvalidInputError => {
    failure = error(message);
    return failure;
  };

  const match = (req: ExchangeRequest): RecordedExchange => {
    const n = ++requests;
    const now = describeRequest(req, redact);
    const label = `request ${n}, ${req.method} ${req.path}`;
    if (isChatRecord(now.record)) {
      const call = `model call ${nextChat + 1} (${label})`;
      const recorded = chats[nextChat];
      if (recorded === undefined) {
        throw mismatch(`${call} was not recorded: the recording holds ${chats.length} model calls and this run makes more`);
      }
      if (recorded.request.digest !== now.record.digest) {
        const diff = requestDiff({ record: recorded.request, blobs: recording.blobs }, now);
        throw mismatch(`${call} differs from the one recorded at line ${recorded.line}:\n  ${diff.join('\n  ')}`);
      }
      nextChat++;
      return recorded;
    }
    const same = others.filter((e) => e.request.path === now.record.path && e.request.digest === now.record.digest);
    const found = same.find((e) => !usedOthers.has(e)) ?? same[0];
    if (found === undefined) {
      const body = now.record.body !== undefined ? ` ${JSON.stringify(now.record.body)}` : '';
      // Not sticky: navi carries on without model details (a changed model name then shows up
      // as the first model call's diff, which says more).
      const err = error(`${label}${printable(body)} was not recorded`.replace(/^request (\d+), /, 'request $1 '));
      metadataFailure ??= err;
      throw err;
    }
    usedOthers.add(found);
    return found;
  };

  const send = async (req: ExchangeRequest, signal: AbortSignal): Promise<ResponseHead> => {
    signal.throwIfAborted();
    if (failure !== null) throw failure;
    const recorded = match(req);
    const started = performance.now();
    const wait = (ms: number): Promise<void> => (timing ? sleepUntil(started + ms, signal) : Promise.resolve());
    const { response } = recorded;
    if (response.status === null) {
      // No answer was recorded: fail as the connection did, or (navi stopped it) wait to be stopped again.
      const err = response.end.error;
      if (err?.code === 'ABORT_ERR' || err === undefined) return new Promise((_resolve, reject) => onAbort(signal, reject));
      await wait(response.end.ms);
      throw Object.assign(new Error(err.message), { code: err.code });
    }
    await wait(response.headers_ms ?? 0);
    const res = new Readable({ read() {} }) as ResponseHead;
    res.statusCode = response.status;
    res.statusMessage = response.status_text ?? '';
    res.complete = false;
    const abort = (): void => {
      res.destroy(new DOMException('the request was aborted', 'AbortError'));
    };
    signal.addEventListener('abort', abort, { once: true });
    res.once('close', () => signal.removeEventListener('abort', abort));
    void pump(res, recorded, wait);
    return res;
  };

  return {
    hooks: { send },
    finish() {
      if (failure !== null) throw failure;
      if (metadataFailure !== null) throw metadataFailure;
      const unused = chats[nextChat];
      if (unused !== undefined) {
        throw new InvalidInputError(
          'replay_mismatch',
          `--replay ${file}: the recording holds ${chats.length} model calls but this run made ${nextChat}: ` +
            `model call ${nextChat + 1} (line ${unused.line}) was never requested, so the run ended earlier than the recorded one\n` +
            `  If the change is intended, record again: --record ${file}`,
        );
      }
    },
  };
}

/** Feeds the recorded answer into `res`, then ends it the way the recorded one ended. */
async function pump(res: ResponseHead, recorded: RecordedExchange, wait: (ms: number) => Promise<void>): Promise<void> {
  const { response } = recorded;
  try {
    if (response.body !== undefined) res.push(Buffer.from(response.body));
    for (const l of response.lines ?? []) {
      await wait(l.ms);
      if (res.destroyed) return;
      res.push(Buffer.from(`${l.line}\n`));
    }
    await wait(response.end.ms);
  } catch {
    return; // stopped meanwhile: the abort listener has destroyed the stream
  }
  if (res.destroyed) return;
  const { how, error } = response.end;
  // A failure destroys the stream with whatever is still buffered: let the reader take the lines first.
  if (how === 'error') await drained(res);
  const stoppedByNavi = how === 'cancelled' || error?.code === 'ABORT_ERR';
  if (how === 'end' || (stoppedByNavi && hasDone(response.lines ?? []))) {
    res.complete = true;
    res.push(null);
  } else if (!stoppedByNavi) {
    res.destroy(Object.assign(new Error(error?.message ?? 'connection closed mid-response'), { code: error?.code ?? 'ECONNRESET' }));
  }
  // Stopped by navi before the answer was complete (a timeout, a stop): nothing more arrives
  // until navi stops this request again.
}

/** Resolves once the reader has taken everything pushed (or the stream closed). */
async function drained(res: ResponseHead): Promise<void> {
  while (res.readableLength > 0 && !res.destroyed) {
    await new Promise<void>((resolve) => {
      const done = (): void => {
        res.off('data', done);
        res.off('close', done);
        resolve();
      };
      res.on('data', done);
      res.on('close', done);
    });
  }
}

function onAbort(signal: AbortSignal, reject: (err: unknown) => void): void {
  const fire = (): void => reject(new DOMException('the request was aborted', 'AbortError'));
  if (signal.aborted) fire();
  else signal.addEventListener('abort', fire, { once: true });
}

/** Resolves at `deadline` (performance.now() time); rejects when `signal` aborts first. */
function sleepUntil(deadline: number, signal: AbortSignal): Promise<void> {
  const ms = deadline - performance.now();
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = (): void => {
      clearTimeout(timer);
      reject(new DOMException('the request was aborted', 'AbortError'));
    };
    signal.addEventListener('abort', stop, { once: true });
  });
}
