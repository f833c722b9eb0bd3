/**
 * One HTTP request's stop switch: the caller's signal, a timer and the end of the call all abort
 * the same controller, and the first cause is remembered so the error says why it stopped.
 */
import { MAX_TIMER_MS } from '../timers.js';

/** Why a request was cut: the caller stopped it, or one of the timers fired. */
export type StopCause = 'caller' | 'first_chunk_timeout' | 'chunk_timeout' | 'request_timeout' | 'call_timeout' | 'unresponsive';

/**
 * Asked when a lenient silence limit passes: true when the server still answers (keep waiting
 * another interval), false when it does not (the request is cut as `unresponsive`).
 */
export type LivenessCheck = () => Promise<boolean>;

export class RequestGuard {
  /** Its signal goes on the HTTP request; aborting it closes the socket. */
  readonly controller = new AbortController();
  private cause: StopCause | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Bumped by every arm/disarm, so a check that answers late cannot re-arm a newer timer. */
  private generation = 0;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private readonly callerSignal: AbortSignal | undefined;
  private readonly onCallerAbort = (): void => this.stop('caller');

  constructor(callerSignal?: AbortSignal) {
    this.callerSignal = callerSignal;
    if (callerSignal?.aborted) this.stop('caller');
    else callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true });
  }

  /** The first reason the request was stopped, if it was. */
  get stopCause(): StopCause | undefined {
    return this.cause;
  }

  /**
   * Starts (or restarts) the silence timer. When it fires the request is aborted with `cause`
   * — unless `check` is given: then the server is asked whether it is still there, and while it
   * answers the timer starts again (a model writing a long tool call sends nothing, SPEC §13).
   * `seconds` of 0, a negative or a non-finite value means no limit.
   */
  arm(cause: 'first_chunk_timeout' | 'chunk_timeout' | 'request_timeout', seconds: number, check?: LivenessCheck): void {
    this.disarm();
    if (!Number.isFinite(seconds) || seconds <= 0) return;
    const generation = this.generation;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (check === undefined) return this.stop(cause);
      void check().then(
        (alive) => {
          if (generation !== this.generation || this.cause !== undefined) return;
          if (alive) this.arm(cause, seconds, check);
          else this.stop('unresponsive');
        },
        () => {
          if (generation === this.generation) this.stop('unresponsive');
        },
      );
    }, Math.min(seconds * 1000, MAX_TIMER_MS));
  }

  disarm(): void {
    this.generation++;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** A limit on the whole request, independent of the silence timer; ≤ 0 or non-finite: none. */
  limitTotal(seconds: number): void {
    if (!Number.isFinite(seconds) || seconds <= 0) return;
    this.deadlineTimer = setTimeout(() => this.stop('call_timeout'), Math.min(seconds * 1000, MAX_TIMER_MS));
  }

  /**
   * Awaits `work` but gives up the moment the request is stopped. The client's own promises
   * normally reject on abort too; racing makes the stop latency independent of its internals.
   */
  race<T>(work: Promise<T>): Promise<T> {
    // The losing promise may reject later (aborted fetch); that rejection is expected.
    work.catch(() => undefined);
    const signal = this.controller.signal;
    if (signal.aborted) return Promise.reject(stoppedError(this.cause));
    // A listener per await, removed when it settles, so a long stream accumulates nothing.
    return new Promise<T>((resolve, reject) => {
      const onStop = (): void => reject(stoppedError(this.cause));
      signal.addEventListener('abort', onStop, { once: true });
      work.then(
        (value) => {
          signal.removeEventListener('abort', onStop);
          resolve(value);
        },
        (err: unknown) => {
          signal.removeEventListener('abort', onStop);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }

  /** Ends the request: clears the timer, unhooks the caller's signal, closes the socket. */
  dispose(): void {
    this.disarm();
    if (this.deadlineTimer !== undefined) clearTimeout(this.deadlineTimer);
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
    this.controller.abort();
  }

  private stop(cause: StopCause): void {
    if (this.cause !== undefined) return;
    this.cause = cause;
    this.disarm();
    if (this.deadlineTimer !== undefined) clearTimeout(this.deadlineTimer);
    this.controller.abort();
  }
}

function stoppedError(cause: StopCause | undefined): DOMException {
  return new DOMException(`request stopped: ${cause ?? 'done'}`, 'AbortError');
}
