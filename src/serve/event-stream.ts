/**
 * The event stream of one session or loop run as the server sends it: every event gets the
 * schema-v1 envelope (`seq` counts within this stream, as within one CLI invocation's output),
 * goes to every subscriber in order, and the events of the current turn are kept so a late
 * subscriber first gets what it missed (from a `seq` it names), then the live ones.
 */
import type { AgentEvent, WireEvent } from '../agent/events.js';
import { SCHEMA_VERSION } from '../agent/schema-version.js';
import type { Subscriber } from './subscriber.js';

/** Events kept for late subscribers: past this many (or bytes) the oldest of the turn are dropped (a replay says so). */
export const MAX_KEPT_EVENTS = 20_000;
export const MAX_KEPT_BYTES = 16 * 1024 * 1024;

/** A result event (`result` is not an AgentEvent: the server builds it from the outcome). */
export type StreamEvent = AgentEvent | ({ type: 'result' } & Record<string, unknown>);

export class EventStream {
  private seq = 0;
  private kept: Array<{ seq: number; frame: string }> = [];
  private keptBytes = 0;
  private dropped = false;
  private readonly subscribers = new Set<Subscriber>();

  constructor(
    private sessionId: string,
    private runId?: string,
  ) {}

  /** The ids the envelope names (a loop run's are known once it opened). */
  setIds(sessionId: string, runId?: string): void {
    this.sessionId = sessionId;
    this.runId = runId;
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  /** The seq the next event gets. */
  get nextSeq(): number {
    return this.seq;
  }

  /** A new turn (or loop run) starts: what a late subscriber catches up on starts here. */
  beginTurn(): void {
    this.kept = [];
    this.keptBytes = 0;
    this.dropped = false;
  }

  publish(event: StreamEvent): WireEvent {
    const wire = this.stamp(event);
    const frame = JSON.stringify(wire);
    this.kept.push({ seq: wire.seq, frame });
    this.keptBytes += frame.length;
    while (this.kept.length > 1 && (this.kept.length > MAX_KEPT_EVENTS || this.keptBytes > MAX_KEPT_BYTES)) {
      this.keptBytes -= this.kept.shift()?.frame.length ?? 0;
      this.dropped = true;
    }
    for (const s of this.subscribers) {
      if (s.push(frame) === 'cut_off' || s.isClosed) this.subscribers.delete(s);
    }
    return wire;
  }

  /** A frame for every subscriber that is not an event (server notices, `serve_…` types). */
  notice(frame: Record<string, unknown>): void {
    const text = JSON.stringify(frame);
    for (const s of this.subscribers) {
      if (s.push(text) === 'cut_off' || s.isClosed) this.subscribers.delete(s);
    }
  }

  /** Adds a subscriber: first the kept events from `since` (exclusive; -1: all), then live ones. */
  subscribe(s: Subscriber, since = -1): void {
    if (this.dropped && (this.kept[0]?.seq ?? 0) > since + 1) {
      s.push(JSON.stringify({ type: 'serve_replay_truncated', message: `the oldest events of this turn are no longer kept; the replay starts at seq ${this.kept[0]?.seq ?? 0}` }));
    }
    for (const k of this.kept) {
      if (k.seq > since) s.push(k.frame);
    }
    this.subscribers.add(s);
  }

  unsubscribe(s: Subscriber): void {
    this.subscribers.delete(s);
  }

  /** Closes every subscriber (the server stops, the session is deleted). */
  closeAll(code: number, reason: string): void {
    for (const s of this.subscribers) s.close(code, reason);
    this.subscribers.clear();
  }

  private stamp(event: StreamEvent): WireEvent {
    const { type, ...payload } = event;
    const wire: WireEvent = { type, schema_version: SCHEMA_VERSION, seq: this.seq++, ts: new Date().toISOString(), session_id: this.sessionId };
    if (this.runId !== undefined) wire.run_id = this.runId;
    return Object.assign(wire, payload);
  }
}
