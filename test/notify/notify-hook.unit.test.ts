/**
 * The loop's hook (src/loop/notify-hook.ts) over a scripted event stream: the runner's events
 * pass through unchanged and in order; an approval prompt becomes `waiting`, the outcome
 * `finished`/`failed` with the exit code, the resume command and the link; a run that throws is
 * `failed` with its error code and the error still reaches the caller; give-ups come back as
 * `notify_failed` warnings.
 */
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.js';
import { StorageError } from '../../src/errors.js';
import { withNotifications } from '../../src/loop/notify-hook.js';
import type { LoopOutcome } from '../../src/loop/runner-types.js';
import { promptOnlyTask } from '../../src/loop/task-file.js';
import { Notifier } from '../../src/notify/notifier.js';
import type { FetchLike } from '../../src/notify/send.js';

const outcome: LoopOutcome = {
  status: 'incomplete',
  reason: 'max_iterations',
  message: 'max iterations reached (2/2) without passing the exit gate',
  runId: 'run_x',
  sessionId: 's',
  iterations: 2,
  maxIterations: 2,
  indicators: null,
  stateHash: null,
  finalText: '',
  modelCalls: 2,
  usage: { promptTokens: 1, completionTokens: 1 },
  marker: null,
};

const script: AgentEvent[] = [
  { type: 'iteration_started', iteration: 2, max_iterations: 2, tokens_spent: 0 },
  { type: 'warning', code: 'check_cannot_run', message: 'x' },
  { type: 'approval_requested', iteration: 2, prompt: 'max_iterations', question: 'Max iterations (2) reached. What now?', options: ['Extend', 'Complete', 'Abort'], block: 'MAX ITERATIONS REACHED' },
  { type: 'loop_complete', status: 'incomplete', reason: 'max_iterations', iterations: 2, max_iterations: 2, phase: null, state_hash: null, indicators: null, marker: null, resumable: true, resume_command: 'navi loop --resume run_x --extend 3' },
];

async function* scripted(fail?: Error): AsyncGenerator<AgentEvent, LoopOutcome> {
  for (const ev of script) {
    // A turn of the event loop per event, as the runner's awaits give.
    await Promise.resolve();
    yield ev;
  }
  if (fail !== undefined) throw fail;
  return outcome;
}

function receiverFetch(status: number): { fetch: FetchLike; bodies: Array<Record<string, unknown>> } {
  const bodies: Array<Record<string, unknown>> = [];
  return {
    bodies,
    fetch: (_url, init) => {
      bodies.push(JSON.parse(init.body) as Record<string, unknown>);
      return Promise.resolve({ status, headers: { get: () => null } });
    },
  };
}

async function drainAll(gen: AsyncGenerator<AgentEvent, LoopOutcome>): Promise<{ events: AgentEvent[]; result: LoopOutcome | Error }> {
  const events: AgentEvent[] = [];
  try {
    for (;;) {
      const step = await gen.next();
      if (step.done) return { events, result: step.value };
      events.push(step.value);
    }
  } catch (err) {
    return { events, result: err as Error };
  }
}

const ctx = { runId: 'run_x', task: promptOnlyTask('fix it'), now: () => Date.parse('2026-12-03T01:02:03.000Z'), pageUrl: (id: string) => `http://127.0.0.1:7777/#/runs/${id}` };

describe('withNotifications', () => {
  it('passes every event through; the prompt is "waiting", the ending "failed" with exit code, resume command and link', async () => {
    const r = receiverFetch(200);
    const n = new Notifier({ targets: [{ url: 'http://127.0.0.1:1/n' }], env: {}, fetch: r.fetch });
    const { events, result } = await drainAll(withNotifications(scripted(), n, ctx));
    expect(events).toEqual(script);
    expect(result).toBe(outcome);
    expect(r.bodies.map((b) => b.event)).toEqual(['waiting', 'failed']);
    expect(r.bodies[0]).toMatchObject({ prompt: 'max_iterations', options: ['Extend', 'Complete', 'Abort'], status_block: 'MAX ITERATIONS REACHED', iteration: 2, link: 'http://127.0.0.1:7777/#/runs/run_x', at: '2026-12-03T01:02:03.000Z' });
    expect(r.bodies[1]).toMatchObject({ outcome: 'incomplete', reason: 'max_iterations', exit_code: 3, message: outcome.message, resume_command: 'navi loop --resume run_x --extend 3', task: 'fix it' });
  });

  it('a run that throws: "failed" with the error code and exit code, and the error reaches the caller', async () => {
    const r = receiverFetch(200);
    const n = new Notifier({ targets: [{ url: 'http://127.0.0.1:1/n', events: ['failed'] }], env: {}, fetch: r.fetch });
    const boom = new StorageError('store_down', 'the database went away');
    const { events, result } = await drainAll(withNotifications(scripted(boom), n, ctx));
    expect(result).toBe(boom);
    expect(events).toEqual(script);
    expect(r.bodies).toEqual([expect.objectContaining({ event: 'failed', outcome: 'failed', reason: 'store_down', exit_code: boom.exitCode, message: 'the database went away' })]);
  });

  it('a target that refuses: the loop goes on, and each give-up is a notify_failed warning in the stream', async () => {
    const r = receiverFetch(404);
    const n = new Notifier({ targets: [{ url: 'https://example.test/secret-path?k=v' }], env: {}, fetch: r.fetch });
    const { events, result } = await drainAll(withNotifications(scripted(), n, ctx));
    expect(result).toBe(outcome);
    const warnings = events.filter((e) => e.type === 'warning' && e.code === 'notify_failed');
    expect(warnings.map((w) => (w as { message: string }).message)).toEqual([
      'notification "waiting" to https://example.test not delivered: HTTP 404',
      'notification "failed" to https://example.test not delivered: HTTP 404',
    ]);
    expect(events.filter((e) => e.type !== 'warning' || e.code !== 'notify_failed')).toEqual(script);
  });
});
