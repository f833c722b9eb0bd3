/**
 * One WebSocket subscriber's bounded queue (seed 001's subscriber queues). The agent never waits
 * for a subscriber: `push` only queues the frame and schedules a flush after the agent's current
 * work (setImmediate), so fanning an event out to fifty sockets never runs inside the agent's
 * step; a flush hands the socket what it can take while few frames are in flight (written but not
 * yet flushed to the OS), in one corked write. A full queue cuts the subscriber off — a client
 * that stopped reading is told it fell behind (it can reload from REST) and its socket is closed,
 * so its backlog never grows in navi's memory.
 */

/** The part of a WebSocket this needs (`ws`'s WebSocket has it). */
export interface FrameSink {
  send(data: string, done: (err?: Error) => void): void;
  close(code: number, reason: string): void;
  /** Drops the connection without the closing handshake (a client that reads nothing never answers it). */
  terminate(): void;
  /** Runs `write`, whose sends go out as one write to the OS (the socket corked); optional. */
  batch?(write: () => void): void;
}

export interface SubscriberLimits {
  /** Frames handed to the socket and not yet flushed. */
  inFlight: number;
  /** Frames waiting behind them; one more and the subscriber is cut off. */
  queued: number;
  /** Bytes waiting (large events): past this the subscriber is cut off too. */
  queuedBytes: number;
  /** How long a cut-off client gets to complete the close before the connection is dropped. */
  closeGraceMs: number;
}

export const DEFAULT_LIMITS: SubscriberLimits = { inFlight: 64, queued: 4096, queuedBytes: 8 * 1024 * 1024, closeGraceMs: 2_000 };

/** The close code of a subscriber that fell behind (private range 4000–4999). */
export const FELL_BEHIND_CODE = 4008;

/** What `push` did with a frame. */
export type PushResult = 'queued' | 'cut_off' | 'closed';

export class Subscriber {
  private inFlight = 0;
  private readonly queue: string[] = [];
  private closed = false;
  private scheduled = false;
  private bytes = 0;

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
    if (this.queue.length >= this.limits.queued || this.bytes + frame.length > this.limits.queuedBytes) {
      this.cutOff();
      return 'cut_off';
    }
    this.queue.push(frame);
    this.bytes += frame.length;
    this.schedule();
    return 'queued';
  }

  /** The socket closed (either side): nothing more is sent. */
  markClosed(): void {
    this.closed = true;
    this.queue.length = 0;
    this.bytes = 0;
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
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.closed || this.queue.length === 0 || this.inFlight >= this.limits.inFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.sink.batch !== undefined) this.sink.batch(() => this.pump());
      else this.pump();
    });
  }

  private pump(): void {
    while (!this.closed && this.inFlight < this.limits.inFlight) {
      const next = this.queue.shift();
      if (next === undefined) return;
      this.bytes -= next.length;
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
