/**
 * One POST of a notification, with bounded retries. What can be retried is retried (no answer,
 * a timeout, 408, 425, 429, 5xx) after a growing pause; anything else (404: the hook is gone;
 * 400: the payload was refused) is given up at once. Redirects are not followed: the body must
 * not go to a host the user did not name. Reasons are built from status codes and error codes
 * only, never from an error's message, which can quote the URL and so its secret.
 */
import { errnoCode, isRecord } from '../util/guards.js';
import type { NotifyTimers } from './timers.js';

/** How hard to try. */
export interface RetryPolicy {
  /** Tries in all (the first included). */
  attempts: number;
  /** Pause before the 2nd, 3rd… try (the last value repeats). */
  backoffMs: readonly number[];
  /** Longest one try may take. */
  timeoutMs: number;
  /** Longest a 429's Retry-After is honoured; a longer one gives up. */
  maxRetryAfterMs: number;
}

/** Three tries, 0.5 s and 2 s apart, 10 s each: a receiver that is down is given up on within seconds. */
export const DEFAULT_RETRY: RetryPolicy = { attempts: 3, backoffMs: [500, 2000], timeoutMs: 10_000, maxRetryAfterMs: 30_000 };

/** How one try went. */
export type Attempt = { ok: true } | { ok: false; retry: boolean; why: string; retryAfterMs?: number };

/** The fetch navi uses (injectable). */
export type FetchLike = (url: string, init: { method: string; headers: Record<string, string>; body: string; redirect: 'manual'; signal: AbortSignal }) => Promise<{ status: number; headers: { get(name: string): string | null }; body?: unknown; arrayBuffer?: () => Promise<ArrayBuffer> }>;

/** A retryable HTTP status. */
export function retryableStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500;
}

/** Retry-After in ms (seconds or an HTTP date), or undefined. */
export function retryAfterMs(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const secs = Number(value.trim());
  if (Number.isFinite(secs) && secs >= 0) return secs * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Why a fetch threw, in words that hold no URL: the system error's code when there is one. */
export function failureWords(err: unknown, timedOut: boolean): string {
  if (timedOut) return 'no answer in time';
  const cause = isRecord(err) ? err.cause : undefined;
  const code = errnoCode(cause) ?? errnoCode(err);
  return code !== undefined ? `could not connect (${code})` : 'could not connect';
}

/** One try: POSTs `body`, aborted after `timeoutMs` or when `stop` fires. */
export async function attemptPost(fetchFn: FetchLike, url: string, body: string, policy: RetryPolicy, timers: NotifyTimers, stop: AbortSignal): Promise<Attempt> {
  const ctl = new AbortController();
  let timedOut = false;
  const timer = timers.setTimeout(() => {
    timedOut = true;
    ctl.abort();
  }, policy.timeoutMs);
  const onStop = (): void => ctl.abort();
  stop.addEventListener('abort', onStop, { once: true });
  try {
    const res = await fetchFn(url, { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'navi-notify' }, body, redirect: 'manual', signal: ctl.signal });
    // Read the answer so the connection is released (a webhook answers "ok" or a short JSON).
    await res.arrayBuffer?.().catch(() => undefined);
    if (res.status >= 200 && res.status < 300) return { ok: true };
    if (res.status >= 300 && res.status < 400) return { ok: false, retry: false, why: `HTTP ${res.status} (redirects are not followed)` };
    const after = res.status === 429 ? retryAfterMs(res.headers.get('retry-after'), Date.now()) : undefined;
    return { ok: false, retry: retryableStatus(res.status), why: `HTTP ${res.status}`, ...(after !== undefined ? { retryAfterMs: after } : {}) };
  } catch (err) {
    return { ok: false, retry: !stop.aborted, why: stop.aborted ? 'still sending when the loop ended' : failureWords(err, timedOut) };
  } finally {
    timers.clearTimeout(timer);
    stop.removeEventListener('abort', onStop);
  }
}

/** Sends with retries; resolves with the last failure's words, or null once delivered. Never throws. */
export async function postWithRetry(fetchFn: FetchLike, url: string, body: string, policy: RetryPolicy, timers: NotifyTimers, stop: AbortSignal): Promise<string | null> {
  let last = 'not sent';
  for (let i = 0; i < policy.attempts; i++) {
    if (stop.aborted) return 'still sending when the loop ended';
    const a = await attemptPost(fetchFn, url, body, policy, timers, stop);
    if (a.ok) return null;
    last = `${a.why}${i > 0 ? ` after ${i + 1} tries` : ''}`;
    if (!a.retry || i === policy.attempts - 1) return last;
    const pause = a.retryAfterMs ?? policy.backoffMs[Math.min(i, policy.backoffMs.length - 1)] ?? 0;
    if (a.retryAfterMs !== undefined && a.retryAfterMs > policy.maxRetryAfterMs) return `${a.why}: asked to wait ${Math.round(a.retryAfterMs / 1000)} s`;
    await timers.sleep(pause, stop);
  }
  return last;
}
