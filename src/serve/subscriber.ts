/**
 * One WebSocket subscriber's bounded queue (seed 001's subscriber queues). The agent never waits
 * for a subscriber: `push` only hands a frame to the socket while few are in flight (written but
 * not yet flushed to the OS), queues a bounded number behind them, and cuts the subscriber off
 * when the queue is full — a client that stopped reading is told it fell behind (it can reload
 * from REST) and its socket is closed, so its backlog never grows in navi's memory.
 */

/** The part of a WebSocket this needs (`ws`'s WebSocket has it). */
export interface FrameSink {
  send(data: string, done: (err?: Error) => void): void;
  close(code: number, reason: string): void;
  /** Drops the connection without the closing handshake (a client that reads nothing never answers it). */
  terminate(): void;
}

export interface SubscriberLimits {
  /** Frames handed to the socket and not yet flushed. */
  inFlight: number;
  /** Frames waiting behind them; one more and the subscriber is cut off. */
  queued: number;
  /** How long a cut-off client gets to complete the close before the connection is dropped. */
  closeGraceMs: number;
}

export const DEFAULT_LIMITS: SubscriberLimits = { inFlight: 64, queued: 4096, closeGraceMs: 2_000 };

/** The close code of a subscriber that fell behind (private range 4000–4999). */
export const FELL_BEHIND_CODE = 4008;

/** What `push` did with a frame. */
export type PushResult = 'sent' | 'queued' | 'cut_off' | 'closed';

export class Subscriber {
  private inFlight = 0;
  private readonly queue: string[] = [];
  private closed = false;

  constructor(
    private readonly sink: FrameSink,
    private readonly limits: SubscriberLimits = DEFAULT_LIMITS,
    private readonly onCutOff: () => void = () => undefined,
  ) {}

  get isClosed(): boolean {
    return this.closed;
  }

  /** Frames waiting in navi's memory for this subscriber. */
  get backlog(): number {
    return this.queue.length;
  }

  push(frame: string): PushResult {
    if (this.closed) return 'closed';
    if (this.inFlight < this.limits.inFlight && this.queue.length === 0) {
      this.write(frame);
      return 'sent';
    }
    if (this.queue.length >= this.limits.queued) {
      this.cutOff();
      return 'cut_off';
    }
    this.queue.push(frame);
    return 'queued';
  }

  /** The socket closed (either side): nothing more is sent. */
  markClosed(): void {
    this.closed = true;
    this.queue.length = 0;
  }

  /** Closes normally (the server stops). */
  close(code: number, reason: string): void {
    if (this.closed) return;
    this.markClosed();
    this.sink.close(code, reason);
  }

  private write(frame: string): void {
    this.inFlight++;
    this.sink.send(frame, (err) => {
      this.inFlight--;
      if (err !== undefined && err !== null) {
        this.markClosed();
        return;
      }
      this.pump();
    });
  }

  private pump(): void {
    while (!this.closed && this.inFlight < this.limits.inFlight) {
      const next = this.queue.shift();
      if (next === undefined) return;
      this.write(next);
    }
  }

  private cutOff(): void {
    this.markClosed();
    this.onCutOff();
    // The notice goes out behind whatever the socket still holds; a client that reads again
    // sees it before the close frame.
    this.sink.send(JSON.stringify({ type: 'serve_fell_behind', message: 'this subscriber fell behind the event stream and was cut off; reload the state from the REST API and subscribe again' }), () => undefined);
    this.sink.close(FELL_BEHIND_CODE, 'fell behind');
    const timer = setTimeout(() => this.sink.terminate(), this.limits.closeGraceMs);
    timer.unref();
  }
}
