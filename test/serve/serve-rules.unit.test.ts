/**
 * The server's small rules, table-driven (Host, Origin and bodies: request-guard.unit.test.ts): bearer parsing, tickets, WebSocket
 * paths, page file paths, NAVIGATOR_STATUS fields, a subscriber's bounded queue, the event
 * stream's replay for late subscribers, and the decision source the API answers.
 */
import { describe, expect, it } from 'vitest';
import { bearerToken, sameToken, TicketBook, ticketFromProtocols } from '../../src/serve/auth.js';
import { EventStream } from '../../src/serve/event-stream.js';
import { statusBlockFields } from '../../src/serve/run-views.js';
import { ServerDecisions } from '../../src/serve/server-decisions.js';
import { contentType, pageFile } from '../../src/serve/static-page.js';
import { FELL_BEHIND_CODE, Subscriber, type FrameSink } from '../../src/serve/subscriber.js';
import { parseWsPath } from '../../src/serve/ws-upgrade.js';
import { renderStatusBlock } from '../../src/loop/status-block.js';

describe('bearerToken', () => {
  it.each([
    ['Bearer abc', 'abc'],
    ['bearer abc', 'abc'],
    ['Bearer  abc ', 'abc'],
    ['Basic abc', null],
    ['Bearer', null],
    ['Bearer a b', null],
    [undefined, null],
  ])('%s → %s', (header, token) => expect(bearerToken(header)).toBe(token));

  it('compares tokens of any length', () => {
    expect(sameToken('abc', 'abc')).toBe(true);
    expect(sameToken('abc', 'abcd')).toBe(false);
    expect(sameToken('', 'abc')).toBe(false);
  });
});

describe('tickets', () => {
  it('are single use and expire', () => {
    let now = 1000;
    const book = new TicketBook(100, () => now);
    const a = book.issue().ticket;
    expect(book.redeem(a)).toBe(true);
    expect(book.redeem(a)).toBe(false);
    const b = book.issue().ticket;
    now += 101;
    expect(book.redeem(b)).toBe(false);
    expect(book.redeem('never-issued')).toBe(false);
  });

  it.each([
    ['navi.v1, navi.ticket.abc', 'abc'],
    ['navi.ticket.xyz', 'xyz'],
    ['navi.v1', null],
    ['navi.ticket.', null],
    [undefined, null],
  ])('ticket in %s → %s', (header, ticket) => expect(ticketFromProtocols(header)).toBe(ticket));
});

describe('parseWsPath', () => {
  it.each([
    ['/ws/sessions/abc', { kind: 'sessions', id: 'abc', since: -1 }],
    ['/ws/runs/run_1?since=12', { kind: 'runs', id: 'run_1', since: 12 }],
    ['/ws/runs/run_1?since=x', { kind: 'runs', id: 'run_1', since: -1 }],
    ['/ws/sessions/a%20b', { kind: 'sessions', id: 'a b', since: -1 }],
    ['/ws/sessions/', null],
    ['/ws/other/abc', null],
    ['/ws/sessions/a/b', null],
    ['/ws/sessions/%E0%A4%A', null],
  ])('%s', (url, parsed) => expect(parseWsPath(url)).toEqual(parsed));
});

describe('page files', () => {
  it.each([
    ['/', '/srv/page/index.html'],
    ['/app.js', '/srv/page/app.js'],
    ['/sub/x.css', '/srv/page/sub/x.css'],
    ['/../secret', null],
    ['/%2e%2e/secret', null],
    ['/a/../../secret', null],
    ['/%00', null],
  ])('%s → %s', (url, file) => expect(pageFile('/srv/page', url)).toBe(file));

  it.each([
    ['index.html', 'text/html; charset=utf-8'],
    ['app.JS', 'text/javascript; charset=utf-8'],
    ['style.css', 'text/css; charset=utf-8'],
    ['icon.svg', 'image/svg+xml'],
    ['blob.bin', 'application/octet-stream'],
  ])('%s is %s', (file, type) => expect(contentType(file)).toBe(type));
});

describe('statusBlockFields', () => {
  it('reads the NAVIGATOR_STATUS block back into fields', () => {
    const block = renderStatusBlock({
      phase: 'IMPL',
      iteration: 2,
      maxIterations: 5,
      indicators: { values: { code_committed: true, tests_passing: false, code_simplified: 'skipped', docs_updated: false, ticket_closed: 'skipped', marker_created: false }, skipped: { code_simplified: 'no diff', ticket_closed: 'no ticket' } },
      exitSignal: false,
      stateHash: 'a1b2c3',
      previousHash: null,
      stagnationCount: 0,
      stagnationThreshold: 3,
      nextAction: 'Run the tests: fix what fails',
    });
    expect(statusBlockFields(block)).toMatchObject({
      phase: 'IMPL',
      iteration: '2/5',
      exit_signal: 'false',
      state_hash: 'a1b2c3',
      previous_hash: 'none',
      stagnation: '0/3',
      next_action: 'Run the tests: fix what fails',
    });
  });
});

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A socket that flushes only when told to. */
function fakeSink(): FrameSink & { sent: string[]; pending: Array<() => void>; flush: () => void; closedWith: number | null; terminated: boolean } {
  const sink = {
    sent: [] as string[],
    pending: [] as Array<() => void>,
    closedWith: null as number | null,
    terminated: false,
    send(data: string, done: (err?: Error) => void) {
      sink.sent.push(data);
      sink.pending.push(() => done());
    },
    close(code: number) {
      sink.closedWith = code;
    },
    terminate() {
      sink.terminated = true;
    },
    flush() {
      for (const f of sink.pending.splice(0)) f();
    },
  };
  return sink;
}

describe('Subscriber', () => {
  it('sends after the current work, while few are in flight, and drains in order as the socket flushes', async () => {
    const sink = fakeSink();
    const sub = new Subscriber(sink, { inFlight: 2, queued: 4, queuedBytes: 1000, closeGraceMs: 10 });
    expect(['a', 'b', 'c', 'd'].map((f) => sub.push(f))).toEqual(['queued', 'queued', 'queued', 'queued']);
    expect(sink.sent).toEqual([]);
    await tick();
    expect(sink.sent).toEqual(['a', 'b']);
    sink.flush();
    await tick();
    expect(sink.sent).toEqual(['a', 'b', 'c', 'd']);
    expect(sub.backlog).toBe(0);
  });

  it('cuts a subscriber that stopped reading off: told it fell behind, closed, nothing kept', async () => {
    const sink = fakeSink();
    let cut = 0;
    const sub = new Subscriber(sink, { inFlight: 1, queued: 2, queuedBytes: 1000, closeGraceMs: 1 }, () => cut++);
    sub.push('a');
    await tick();
    expect(['b', 'c', 'd'].map((f) => sub.push(f))).toEqual(['queued', 'queued', 'cut_off']);
    expect(cut).toBe(1);
    expect(sink.closedWith).toBe(FELL_BEHIND_CODE);
    expect(JSON.parse(sink.sent.at(-1) ?? '{}')).toMatchObject({ type: 'serve_fell_behind' });
    expect(sub.backlog).toBe(0);
    expect(sub.push('e')).toBe('closed');
  });

  it('cuts off on queued bytes too (large events)', () => {
    const sink = fakeSink();
    const sub = new Subscriber(sink, { inFlight: 1, queued: 100, queuedBytes: 10, closeGraceMs: 1 });
    expect(['12345', '12345', '1'].map((f) => sub.push(f))).toEqual(['queued', 'queued', 'cut_off']);
  });
});

describe('EventStream', () => {
  it('stamps the envelope, and a late subscriber gets the current turn from a seq, then live events', async () => {
    const stream = new EventStream('s1');
    stream.publish({ type: 'text_delta', text: 'old turn' });
    stream.beginTurn();
    stream.publish({ type: 'text_delta', text: 'one' });
    stream.publish({ type: 'text_delta', text: 'two' });
    const sink = fakeSink();
    stream.subscribe(new Subscriber(sink), 1);
    stream.publish({ type: 'text_delta', text: 'three' });
    await tick();
    const got = sink.sent.map((f) => JSON.parse(f) as Record<string, unknown>);
    expect(got.map((e) => [e.seq, e.text])).toEqual([
      [2, 'two'],
      [3, 'three'],
    ]);
    expect(got[0]).toMatchObject({ type: 'text_delta', schema_version: 1, session_id: 's1' });
  });
});

describe('ServerDecisions', () => {
  it('waits for an answer that fits the menu; a stop ends the wait with none', async () => {
    const d = new ServerDecisions();
    expect(d.answer('continue')).toMatchObject({ ok: false, code: 'no_pending_decision' });
    const ac = new AbortController();
    const asked = d.decide({ prompt: 'max_iterations', iteration: 3, question: 'More?' }, ac.signal);
    expect(d.pending).toMatchObject({ prompt: 'max_iterations', words: ['extend', 'complete', 'abort'], options: ['Extend', 'Complete', 'Abort'] });
    expect(d.answer('continue')).toMatchObject({ ok: false, code: 'decision_invalid' });
    expect(d.answer('extend', 'two more')).toEqual({ ok: true });
    await expect(asked).resolves.toEqual({ decision: 'extend', feedback: 'two more', source: 'decisions_file' });
    expect(d.pending).toBeNull();
    const stopped = d.decide({ prompt: 'approval', iteration: 4, question: 'Accept?' }, ac.signal);
    ac.abort();
    await expect(stopped).resolves.toBeNull();
  });
});
