/**
 * `navi serve`, loop runs (issue 19): a loop started by `navi loop` in another process on the
 * same store shows up as running, then with its committed iterations (followed live on
 * /ws/runs/{id}); POST /runs with strict approval is answered through POST /runs/{id}/decisions.
 */
import { describe, expect, it } from 'vitest';
import { validateEvent } from '../../src/agent/events.js';
import { forEachBackend } from '../support/databases.js';
import { fixIteration, lookIteration, loopRepo, scenario, script } from '../loop-scenario/helpers.js';
import { eventually, serve, stopServe, subscribe } from './helpers.js';

const T = 170_000;

describe('navi serve: loop runs', () => {
  forEachBackend((backend) => {
    it(
      'a navi loop in another process is listed as running, then with its iterations; its iterations stream to a subscriber',
      async () => {
        const s = await scenario(backend, script(lookIteration('looked once'), fixIteration()));
        loopRepo(s.cwd);
        const srv = await serve(s);
        const release = s.fake.holdChats();
        const loop = s.start(['loop', 'task.yaml', '--max-iterations', '3', '-o', 'stream-json']);
        const started = await loop.waitForEvent('loop_started');
        const runId = String(started.run_id);
        const running = await eventually(async () => {
          const list = await srv.api('GET', '/runs');
          return (list.body.runs as Array<Record<string, unknown>>).find((r) => r.id === runId && r.status === 'running');
        }, 'the run listed as running');
        expect(running).toMatchObject({ alive: true, task_name: 'fix-add', task: expect.stringContaining('Make the failing test pass') as unknown, owner: expect.stringMatching(/^pid \d+ on /) as unknown });
        const sub = await subscribe(srv.url, `/ws/runs/${runId}`, { headers: srv.auth });
        release();
        const committed = await sub.waitFor((f) => f.type === 'serve_iteration_committed', 'an iteration committed');
        expect(committed).toMatchObject({ run_id: runId, iteration: { iteration: 1, status: { phase: expect.any(String) as unknown, state_hash: expect.stringMatching(/^[0-9a-f]{6}$/) as unknown } } });
        const end = await loop.result;
        expect(end.code).toBe(0);
        const shown = await eventually(async () => {
          const r = await srv.api('GET', `/runs/${runId}`);
          return r.body.status === 'completed' ? r : undefined;
        }, 'the run completed');
        const iterations = shown.body.iterations as Array<Record<string, unknown>>;
        expect(iterations.map((i) => i.iteration)).toEqual([1, 2]);
        expect(iterations[1]).toMatchObject({ gate_decision: 'exit', status_block: expect.stringContaining('NAVIGATOR_STATUS') as unknown, status: { exit_signal: 'true' } });
        expect(shown.body).toMatchObject({ alive: null, pending_decision: null });
        await sub.waitFor((f) => f.type === 'serve_run_updated' && (f.run as Record<string, unknown>).status === 'completed', 'the completed status');
        expect(await stopServe(srv)).toBe(130);
      },
      T,
    );

    it(
      'POST /runs with strict approval: the prompt streams, POST /runs/{id}/decisions answers it (continue, then abort)',
      async () => {
        const s = await scenario(backend, script(lookIteration('first look'), lookIteration('second look')));
        loopRepo(s.cwd);
        const srv = await serve(s, ['--cwd', s.cwd]);
        const started = await srv.api('POST', '/runs', { task: 'task.yaml', approval: 'strict', max_iterations: 3 });
        expect(started).toMatchObject({ status: 201, body: { id: expect.stringMatching(/^run_/) as unknown, status: 'running' } });
        const runId = String(started.body.id);
        const sub = await subscribe(srv.url, `/ws/runs/${runId}`, { headers: srv.auth });
        await sub.waitFor((f) => f.type === 'approval_requested', 'the first approval prompt');
        const pending = await srv.api('GET', `/runs/${runId}`);
        expect(pending.body).toMatchObject({ owner: 'this server', alive: true, pending_decision: { prompt: 'approval', iteration: 1, words: ['continue', 'adjust', 'abort'] } });
        expect(await srv.api('POST', `/runs/${runId}/decisions`, { decision: 'extend' })).toMatchObject({ status: 400, body: { error: { code: 'decision_invalid' } } });
        expect(await srv.api('POST', `/runs/${runId}/decisions`, { decision: 'continue' })).toMatchObject({ status: 200, body: { accepted: true } });
        await sub.waitFor((f) => f.type === 'approval_requested' && f.iteration === 2, 'the second approval prompt');
        // Over the WebSocket this time, as the page's buttons do.
        sub.ws.send(JSON.stringify({ type: 'decision', decision: 'abort' }));
        const result = await sub.waitFor((f) => f.type === 'result', 'the result');
        expect(result).toMatchObject({ status: 'aborted', reason: 'user_aborted', exit_code: 4, run_id: runId });
        const events = sub.frames.filter((f) => f.schema_version === 1);
        expect(events.flatMap((f) => validateEvent(f))).toEqual([]);
        expect(events.map((f) => f.seq)).toEqual(events.map((_, i) => i));
        expect(events.filter((f) => f.type === 'approval_decision').map((f) => f.decision)).toEqual(['continue', 'abort']);
        expect(await srv.api('POST', `/runs/${runId}/decisions`, { decision: 'continue' })).toMatchObject({ status: 409 });
        const stored = await srv.api('GET', `/runs/${runId}`);
        expect(stored.body).toMatchObject({ status: 'aborted', reason: 'user_aborted', iteration: 2 });
        expect(await stopServe(srv)).toBe(130);
      },
      T,
    );

    it(
      'POST /runs/{id}/stop stops a run this server drives at a safe point (interrupted, resumable)',
      async () => {
        const s = await scenario(backend, script(lookIteration('first look'), lookIteration('second look')));
        loopRepo(s.cwd);
        const srv = await serve(s, ['--cwd', s.cwd]);
        s.fake.holdChats();
        const runId = String((await srv.api('POST', '/runs', { task: 'task.yaml', max_iterations: 2 })).body.id);
        const sub = await subscribe(srv.url, `/ws/runs/${runId}`, { headers: srv.auth });
        await eventually(() => Promise.resolve(s.chats().length > 0 ? true : undefined), 'the first chat request');
        expect(await srv.api('POST', `/runs/${runId}/stop`)).toMatchObject({ status: 200, body: { stopping: true } });
        expect(await sub.waitFor((f) => f.type === 'result', 'the result')).toMatchObject({ status: 'interrupted', exit_code: 130 });
        expect((await srv.api('GET', `/runs/${runId}`)).body).toMatchObject({ status: 'interrupted' });
        expect(await stopServe(srv)).toBe(130);
      },
      T,
    );
  });
});
