/**
 * `callModelPatiently` (issue 17 point 11): the model call waits out a transient Ollama outage
 * — a reply cut when Ollama restarts, connections refused meanwhile, 503 "server busy" — with
 * backoff, warnings and heartbeats, bounded by `llm.outage_retry`; anything else passes through.
 * The real adapter against the fake server over HTTP.
 */
import { describe, expect, it } from 'vitest';
import { callModelPatiently, outageDelayMs, type ModelCallOutcome } from '../../src/agent/model-call.js';
import type { AgentEvent } from '../../src/agent/events.js';
import { EventChannel } from '../../src/agent/wait-with-heartbeat.js';
import { InvalidInputError, LlmUnavailableError } from '../../src/errors.js';
import { LOOP_OUTAGE_RETRY_MS, outageRetryMs, outageRetryProblem } from '../../src/config/outage-retry.js';
import { fakeOllama } from '../support/fake-ollama-harness.js';
import type { FakeScript } from '../support/fake-ollama.js';
import { chatRequest, clientFor } from '../llm/llm-test-helpers.js';

async function run(script: FakeScript, outageRetry: number): Promise<{ events: AgentEvent[]; outcome?: ModelCallOutcome; error?: unknown; chats: number }> {
  const fake = await fakeOllama(script);
  const gen = callModelPatiently({
    llm: clientFor(fake.url),
    request: chatRequest(),
    iteration: 1,
    channel: new EventChannel(),
    heartbeatMs: 200,
    now: Date.now,
    outageRetryMs: outageRetry,
  });
  const events: AgentEvent[] = [];
  try {
    for (;;) {
      const step = await gen.next();
      if (step.done === true) return { events, outcome: step.value, chats: fake.requests.filter((r) => r.path === '/api/chat').length };
      events.push(step.value);
    }
  } catch (error) {
    return { events, error, chats: fake.requests.filter((r) => r.path === '/api/chat').length };
  }
}

describe('outage retry settings', () => {
  it.each([
    [undefined, true, LOOP_OUTAGE_RETRY_MS],
    [undefined, false, 0],
    ['0', true, 0],
    [0, true, 0],
    ['90s', false, 90_000],
    ['2m', true, 120_000],
  ] as const)('outage_retry %j, loop %s → %i ms', (value, loop, ms) => {
    expect(outageRetryMs(value, loop)).toBe(ms);
  });

  it.each([['5m', undefined], [0, undefined], ['0', undefined], ['soon', /must be a duration/], [30, /must be a duration/], ['-1m', /must be a duration/]] as const)(
    '%j → %s',
    (value, problem) => {
      if (problem === undefined) expect(outageRetryProblem(value)).toBeUndefined();
      else expect(outageRetryProblem(value)).toMatch(problem);
    },
  );

  it('backs off 1 s, 2 s, 4 s … up to 30 s', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 40].map(outageDelayMs)).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });
});

describe('callModelPatiently against the fake server', () => {
  it('Ollama restarts mid-reply (dropped, then refused), then answers: the call succeeds after warnings and heartbeats', async () => {
    const r = await run(
      { turns: [{ content: 'a partial answer that never ends', chunk_size: 4, drop_after_chunks: 2, restart_ms: 1500 }, { content: 'Back again.' }] },
      60_000,
    );
    expect(r.error).toBeUndefined();
    expect(r.outcome?.kind).toBe('reply');
    expect(r.outcome?.reply.content).toBe('Back again.');
    const warnings = r.events.filter((e) => e.type === 'warning');
    expect(warnings.length).toBeGreaterThanOrEqual(2);
    expect(warnings.every((w) => w.type === 'warning' && w.code === 'ollama_outage')).toBe(true);
    expect(warnings[0]).toMatchObject({ message: expect.stringMatching(/ended the response .* before it was complete.*asking again in 1 s \(llm\.outage_retry: \d+ s left\)/) as unknown });
    expect(warnings.slice(1).some((w) => w.type === 'warning' && /cannot reach Ollama/.test(w.message))).toBe(true);
    expect(r.events.some((e) => e.type === 'heartbeat' && e.waiting_for === 'model')).toBe(true);
  }, 60_000);

  it('503 "server busy" is waited out too', async () => {
    const busy = { http_status: 503, error_message: 'server busy, please try again.  maximum pending requests exceeded' };
    const r = await run({ turns: [busy, { content: 'ok' }] }, 60_000);
    expect(r.outcome?.reply.content).toBe('ok');
    expect(r.events.filter((e) => e.type === 'warning').map((e) => (e.type === 'warning' ? e.code : ''))).toEqual(['ollama_outage']);
    expect(r.chats).toBe(2);
  }, 60_000);

  it('past the budget the outage is thrown (exit 75), saying how long it waited', async () => {
    const busy = { http_status: 503, error_message: 'server busy, please try again.  maximum pending requests exceeded' };
    const r = await run({ turns: [busy, busy, busy, busy] }, 2_500);
    expect(r.error).toBeInstanceOf(LlmUnavailableError);
    expect(r.error).toMatchObject({ code: 'ollama_busy', exitCode: 75 });
    expect((r.error as Error).message).toMatch(/still failing after \d+ s of llm\.outage_retry/);
    // 1 s then 2 s: the third wait would pass 2.5 s.
    expect(r.chats).toBe(2);
  }, 60_000);

  it('without a budget (a one-shot by default) the outage is thrown at once', async () => {
    const r = await run({ turns: [{ http_status: 503, error_message: 'server busy, please try again.' }, { content: 'never' }] }, 0);
    expect(r.error).toMatchObject({ code: 'ollama_busy' });
    expect(r.events.some((e) => e.type === 'warning')).toBe(false);
    expect(r.chats).toBe(1);
  });

  it('a refused request is not an outage: thrown at once, exit 2', async () => {
    const r = await run({ turns: [{ http_status: 400, error_message: 'option "num_ctx" must be of type integer' }, { content: 'never' }] }, 60_000);
    expect(r.error).toBeInstanceOf(InvalidInputError);
    expect(r.chats).toBe(1);
  });
});
