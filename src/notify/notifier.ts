/**
 * Sends a loop's notifications off the loop's path (issue 19). `notify()` only queues and
 * returns: each target has its own queue and one send in flight, the most urgent waiting
 * notification first (waiting on you › failed › finished), each notification once per target.
 * Failures never reach the loop: a notification given up on becomes a warning line (with the
 * target's redacted form only). At the loop's end `drain()` gives what is pending a short,
 * bounded grace, then aborts the rest and says what was not delivered.
 */
import { NOTIFY_EVENTS, type NotifyEventKind, type NotifyFormat, type NotifyTargetConfig } from '../config/notify-schema.js';
import { classifyUrl, type UrlClassifier } from './classify.js';
import { discordPayload } from './format-discord.js';
import { slackPayload } from './format-slack.js';
import { genericPayload, urgencyRank, type NotifyEvent } from './notify-event.js';
import { DEFAULT_RETRY, postWithRetry, type FetchLike, type RetryPolicy } from './send.js';
import { realTimers, type NotifyTimers } from './timers.js';
import { expandUrl, redactUrl } from './url.js';

/** How long the end of a loop waits for notifications still being sent. */
export const DEFAULT_GRACE_MS = 5000;

/** What a notifier is built from. */
export interface NotifierOptions {
  targets: readonly NotifyTargetConfig[];
  /** Where `${VAR}`s in URLs are looked up, when sending. */
  env: Readonly<Record<string, string | undefined>>;
  fetch?: FetchLike;
  timers?: NotifyTimers;
  retry?: RetryPolicy;
  /** Payload shape of a URL without a `format` (default: by host). */
  classify?: UrlClassifier;
}

/** The body a shape sends. */
export function payloadFor(format: NotifyFormat, ev: NotifyEvent): Record<string, unknown> {
  if (format === 'slack') return slackPayload(ev);
  if (format === 'discord') return discordPayload(ev);
  return genericPayload(ev);
}

interface Queue {
  target: NotifyTargetConfig;
  events: readonly NotifyEventKind[];
  shown: string;
  pending: NotifyEvent[];
  /** Keys already queued (each notification goes once). */
  seen: Set<string>;
  /** A worker is sending (set and cleared in the same turn as the queue is checked). */
  busy: boolean;
  /** The last worker (resolved once it stopped). */
  worker: Promise<void>;
}

/** Sends notifications to a loop's targets. */
export class Notifier {
  private readonly queues: Queue[];
  private readonly stop = new AbortController();
  private readonly fetchFn: FetchLike;
  private readonly timers: NotifyTimers;
  private readonly retry: RetryPolicy;
  private readonly classify: UrlClassifier;
  private warnings: string[] = [];
  private closed = false;

  constructor(private readonly opts: NotifierOptions) {
    this.queues = opts.targets.map((target) => ({ target, events: target.events ?? NOTIFY_EVENTS, shown: redactUrl(target.url), pending: [], seen: new Set(), busy: false, worker: Promise.resolve() }));
    this.fetchFn = opts.fetch ?? globalThis.fetch;
    this.timers = opts.timers ?? realTimers;
    this.retry = opts.retry ?? DEFAULT_RETRY;
    this.classify = opts.classify ?? classifyUrl;
  }

  /** True when there is somewhere to send. */
  get active(): boolean {
    return this.queues.length > 0;
  }

  /** The targets as they may be shown (scheme and host). */
  get shownTargets(): string[] {
    return this.queues.map((q) => q.shown);
  }

  /**
   * Queues `ev` for every target that wants its kind; returns at once. `key` names the
   * notification (default its kind and iteration): the same key is sent once per target.
   */
  notify(ev: NotifyEvent, key = `${ev.kind}:${ev.iteration ?? 0}:${ev.prompt ?? ''}`): void {
    if (this.closed) return;
    for (const q of this.queues) {
      if (!q.events.includes(ev.kind) || q.seen.has(key)) continue;
      q.seen.add(key);
      q.pending.push(ev);
      this.pump(q);
    }
  }

  /** Warnings since the last call: notifications given up on. */
  takeWarnings(): string[] {
    return this.warnings.splice(0);
  }

  /**
   * Waits up to `graceMs` for every queue to empty, then aborts what is left; afterwards
   * nothing more is sent. Never throws, never waits past the grace (plus the aborts settling).
   */
  async drain(graceMs = DEFAULT_GRACE_MS): Promise<void> {
    this.closed = true;
    let timer: unknown;
    const grace = new Promise<'late'>((resolve) => {
      timer = this.timers.setTimeout(() => resolve('late'), graceMs);
    });
    const how = await Promise.race([this.idle().then(() => 'idle' as const), grace]);
    this.timers.clearTimeout(timer);
    if (how === 'idle') return;
    this.stop.abort();
    await this.idle();
    for (const q of this.queues) {
      for (const ev of q.pending.splice(0)) this.warnings.push(`notification "${ev.kind}" to ${q.shown} not sent: the loop ended first`);
    }
  }

  private idle(): Promise<void> {
    return Promise.all(this.queues.map((q) => q.worker)).then(() => undefined);
  }

  private pump(q: Queue): void {
    if (q.busy) return;
    q.busy = true;
    q.worker = this.work(q);
  }

  private async work(q: Queue): Promise<void> {
    // Let the caller go on first: nothing of a send runs on the loop's turn.
    await Promise.resolve();
    while (q.pending.length > 0 && !this.stop.signal.aborted) {
      q.pending.sort((a, b) => urgencyRank(a.kind) - urgencyRank(b.kind));
      const ev = q.pending.shift() as NotifyEvent;
      await this.deliver(q, ev);
    }
    q.busy = false;
  }

  private async deliver(q: Queue, ev: NotifyEvent): Promise<void> {
    try {
      const expanded = expandUrl(q.target.url, this.opts.env);
      if (!expanded.ok) {
        this.warnings.push(`notification "${ev.kind}" to ${q.shown} not sent: ${expanded.missing.map((n) => `\${${n}}`).join(', ')} not set`);
        return;
      }
      const format = q.target.format ?? this.classify(expanded.url);
      const body = JSON.stringify(payloadFor(format, ev));
      const why = await postWithRetry(this.fetchFn, expanded.url, body, this.retry, this.timers, this.stop.signal);
      if (why !== null) this.warnings.push(`notification "${ev.kind}" to ${q.shown} not delivered: ${why}`);
    } catch {
      // A bug here must not reach the loop; say so without the error's text (it may hold the URL).
      this.warnings.push(`notification "${ev.kind}" to ${q.shown} not delivered: unexpected error`);
    }
  }
}
