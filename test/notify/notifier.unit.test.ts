/**
 * The notifier's rules (issue 19), with a scripted fetch and a hand-moved clock: what is retried
 * and what is given up at once, the pause between tries, each notification once per target and
 * the most urgent first, the events filter, `${VAR}` read when sending, and the end-of-loop grace
 * that aborts what is left — every give-up a warning naming the target by scheme and host.
 */
import { describe, expect, it } from 'vitest';
import { Notifier } from '../../src/notify/notifier.js';
import type { NotifyEvent } from '../../src/notify/notify-event.js';
import { DEFAULT_RETRY, failureWords, retryableStatus, retryAfterMs, type FetchLike } from '../../src/notify/send.js';
import { manualTimers } from './manual-timers.js';

const SECRET = 's3cr3t-path';

function event(kind: NotifyEvent['kind'], iteration = 1): NotifyEvent {
  return { kind, run_id: 'run_1', task_name: 't', task: 'do it', iteration, max_iterations: 5, status_block: null, link: null, at: '2026-12-03T00:00:00.000Z' };
}

interface Call {
  url: string;
  body: Record<string, unknown>;
}

/** A fetch answering from `answers` in turn (a number: that status; 'refuse': ECONNREFUSED; 'hang': until aborted). */
function scriptedFetch(answers: Array<number | 'refuse' | 'hang'>): { fetch: FetchLike; calls: Call[] } {
  const calls: Call[] = [];
  let i = 0;
  const fetch: FetchLike = (url, init) => {
    calls.push({ url, body: JSON.parse(init.body) as Record<string, unknown> });
    const a = answers[Math.min(i++, answers.length - 1)];
    if (a === 'refuse') return Promise.reject(Object.assign(new TypeError(`fetch failed for ${url}`), { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) }));
    if (a === 'hang') {
      return new Promise((_resolve, reject) => init.signal.addEventListener('abort', () => reject(new Error(`aborted ${url}`)), { once: true }));
    }
    return Promise.resolve({ status: a ?? 200, headers: { get: () => null } });
  };
  return { fetch, calls };
}

describe('retry rules', () => {
  it.each([
    [200, false],
    [404, false],
    [400, false],
    [408, true],
    [425, true],
    [429, true],
    [500, true],
    [503, true],
  ])('HTTP %i retryable: %s', (status, retry) => {
    expect(status >= 200 && status < 300 ? false : retryableStatus(status)).toBe(retry);
  });
  it.each([
    ['3', 3000],
    ['0', 0],
    ['', undefined],
    [null, undefined],
    ['soon', undefined],
  ])('Retry-After %j → %j ms', (value, ms) => {
    expect(retryAfterMs(value, 0)).toBe(ms);
  });
  it('failure words hold error codes, never the error message (it can quote the URL)', () => {
    const err = Object.assign(new TypeError(`fetch failed https://x/${SECRET}`), { cause: { code: 'ENOTFOUND' } });
    expect(failureWords(err, false)).toBe('could not connect (ENOTFOUND)');
    expect(failureWords(new Error(SECRET), false)).toBe('could not connect');
    expect(failureWords(err, true)).toBe('no answer in time');
  });
});

describe('Notifier', () => {
  it('retries a 503 after the backoff pauses, then delivers; no warning', async () => {
    const timers = manualTimers();
    const { fetch, calls } = scriptedFetch([503, 503, 200]);
    const n = new Notifier({ targets: [{ url: 'http://127.0.0.1:1/h' }], env: {}, fetch, timers });
    n.notify(event('finished'));
    await timers.advance(10_000);
    expect(calls).toHaveLength(3);
    expect(timers.sleeps).toEqual([...DEFAULT_RETRY.backoffMs]);
    expect(n.takeWarnings()).toEqual([]);
  });

  it('gives up at once on a 404, and after the last try on a refused connection; warnings name scheme and host only', async () => {
    const timers = manualTimers();
    const gone = scriptedFetch([404]);
    const down = scriptedFetch(['refuse']);
    const n1 = new Notifier({ targets: [{ url: `https://hooks.slack.com/services/${SECRET}` }], env: {}, fetch: gone.fetch, timers });
    const n2 = new Notifier({ targets: [{ url: `http://127.0.0.1:9/x?token=${SECRET}` }], env: {}, fetch: down.fetch, timers });
    n1.notify(event('failed'));
    n2.notify(event('failed'));
    await timers.advance(60_000);
    expect(gone.calls).toHaveLength(1);
    expect(down.calls).toHaveLength(DEFAULT_RETRY.attempts);
    const warnings = [...n1.takeWarnings(), ...n2.takeWarnings()];
    expect(warnings).toEqual([
      'notification "failed" to https://hooks.slack.com not delivered: HTTP 404',
      `notification "failed" to http://127.0.0.1:9 not delivered: could not connect (ECONNREFUSED) after ${DEFAULT_RETRY.attempts} tries`,
    ]);
    expect(warnings.join('\n')).not.toContain(SECRET);
  });

  it('sends each notification once per target, honours the events filter, and the most urgent waiting one first', async () => {
    const timers = manualTimers();
    const { fetch, calls } = scriptedFetch(['hang', 200]);
    const n = new Notifier({
      targets: [{ url: 'http://a.test/1' }, { url: 'http://b.test/2', events: ['waiting'] }],
      env: {},
      fetch,
      timers,
    });
    n.notify(event('finished', 3));
    // While a.test's first send hangs, a failure and a prompt queue up behind it: the prompt goes first.
    await timers.advance(0);
    n.notify(event('failed', 3));
    n.notify(event('waiting', 3));
    n.notify(event('waiting', 3));
    await timers.advance(DEFAULT_RETRY.timeoutMs * 10);
    const a = calls.filter((c) => c.url === 'http://a.test/1').map((c) => c.body.event);
    const b = calls.filter((c) => c.url === 'http://b.test/2').map((c) => c.body.event);
    // The hung first try is retried (finished), then the queue in urgency order.
    expect(a).toEqual(['finished', 'finished', 'waiting', 'failed']);
    expect(b).toEqual(['waiting']);
  });

  it('reads ${VAR} when sending: a variable unset by then is a warning naming it, nothing sent', async () => {
    const timers = manualTimers();
    const { fetch, calls } = scriptedFetch([200]);
    const env: Record<string, string | undefined> = { HOOK: SECRET };
    const n = new Notifier({ targets: [{ url: 'https://hooks.slack.com/services/${HOOK}' }], env, fetch, timers, classify: () => 'discord' });
    n.notify(event('waiting', 1));
    await timers.advance(0);
    expect(calls.map((c) => c.url)).toEqual([`https://hooks.slack.com/services/${SECRET}`]);
    // The classifier decided the shape (a Discord body sent to a Slack host: injectable for tests).
    expect(calls[0]!.body).toHaveProperty('embeds');
    delete env.HOOK;
    n.notify(event('waiting', 2));
    await timers.advance(0);
    expect(calls).toHaveLength(1);
    expect(n.takeWarnings()).toEqual(['notification "waiting" to https://hooks.slack.com not sent: ${HOOK} not set']);
  });

  it('a target format overrides the URL: slack shape to a local receiver', async () => {
    const timers = manualTimers();
    const { fetch, calls } = scriptedFetch([200]);
    const n = new Notifier({ targets: [{ url: 'http://127.0.0.1:5/x', format: 'slack' }], env: {}, fetch, timers });
    n.notify(event('finished'));
    await timers.advance(0);
    expect(Object.keys(calls[0]!.body).sort()).toEqual(['blocks', 'text']);
  });

  it('drain: returns once everything is delivered; past the grace it aborts the rest and says what was lost', async () => {
    const timers = manualTimers();
    const ok = scriptedFetch([200]);
    const fast = new Notifier({ targets: [{ url: 'http://a.test/' }], env: {}, fetch: ok.fetch, timers });
    fast.notify(event('finished'));
    let drained = false;
    void fast.drain(5000).then(() => (drained = true));
    await timers.advance(0);
    expect(drained).toBe(true);
    expect(fast.takeWarnings()).toEqual([]);

    const stuck = scriptedFetch(['hang']);
    const slow = new Notifier({ targets: [{ url: `http://b.test/${SECRET}` }], env: {}, fetch: stuck.fetch, timers });
    slow.notify(event('waiting'));
    slow.notify(event('finished'));
    let done = false;
    void slow.drain(5000).then(() => (done = true));
    await timers.advance(4999);
    expect(done).toBe(false);
    await timers.advance(1);
    expect(done).toBe(true);
    expect(slow.takeWarnings()).toEqual([
      'notification "waiting" to http://b.test not delivered: still sending when the loop ended',
      'notification "finished" to http://b.test not sent: the loop ended first',
    ]);
    expect(timers.pending()).toBe(0);
    // Closed: nothing more is queued.
    slow.notify(event('failed'));
    await timers.advance(60_000);
    expect(stuck.calls).toHaveLength(1);
  });
});
