/**
 * Durability (SPEC §7, §9): every iteration is committed before the next starts, so a run killed
 * with SIGKILL, stopped by SIGINT, out of iterations or out of budget resumes at the right
 * iteration with its counters — on both storage backends.
 */
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { until } from '../scenario/helpers.js';
import {
  eventsOf,
  expectExit,
  expectLoopStream,
  fixIteration,
  iterationMessages,
  lookIteration,
  loopRepo,
  markerFiles,
  resultOf,
  say,
  scenario,
  script,
  tc,
} from './helpers.js';

/** Per-test hang guard: far above the real time (several CLI runs, seconds each under load). */
const T = 120_000;

forEachBackend((backend) => {
  describe('resume', () => {
    it(
      'killed with SIGKILL mid-iteration: the half iteration was never committed; --resume redoes it (no lost or duplicated rows)',
      async () => {
        // Iteration 2's second model call hangs (a long prefill) until the process is killed.
        const turns = [...lookIteration('first look'), tc('read_file', { path: 'math.test.js' }), { content: 'never sent', first_chunk_delay_ms: 600_000 }];
        const s = await scenario(backend, { turns });
        loopRepo(s.cwd);
        const child = s.start(['loop', 'task.yaml', '-o', 'stream-json']);
        await child.waitForEvent('tool_call', (e) => e.loop_iteration === 2);
        // Killed while that call hangs: mid-iteration, after its first tool ran.
        await until(() => s.chats().some((r) => r.turn === turns.length - 1), 30_000, 'the hanging model call');
        child.child.kill('SIGKILL');
        const killed = await child.result;
        expect(killed.signal).toBe('SIGKILL');
        const runId = String(killed.events[0]?.run_id);
        const before = await s.db.withStore(async (store) => ({ run: await store.loopRuns.get(runId), rows: await store.loopRuns.listIterations(runId) }));
        expect(before.run).toMatchObject({ status: 'running', iteration: 1 });
        expect(before.rows.map((r) => r.iteration)).toEqual([1]);

        s.fake.setScript(script(fixIteration()));
        const resumed = await s.navi(['loop', '--resume', runId, '-o', 'stream-json']);
        expectExit(resumed, 0);
        const events = expectLoopStream(resumed);
        expect(eventsOf(events, 'loop_started')[0]).toMatchObject({ resumed: true, start_iteration: 2 });
        const warning = eventsOf(events, 'warning').find((w) => w.code === 'loop_run_taken_over');
        expect(String(warning?.message)).toMatch(/previous process \(pid \d+ on .+\) is gone; taking the run over/);
        expect(eventsOf(events, 'iteration_status').map((e) => e.iteration)).toEqual([2]);
        expect(resultOf(resumed)).toMatchObject({ status: 'success', run_id: runId, iterations: 2 });
        expect(iterationMessages(s.chats().slice(-6))[0]).toMatch(/^LOOP MODE — iteration 2 of 5/);
        const after = await s.db.withStore(async (store) => ({ run: await store.loopRuns.get(runId), rows: await store.loopRuns.listIterations(runId) }));
        expect(after.rows.map((r) => r.iteration)).toEqual([1, 2]);
        expect(after.run).toMatchObject({ status: 'completed', iteration: 2 });
        expect(after.run!.promptTokens).toBeGreaterThan(before.run!.promptTokens);
        // A completed run is over.
        const again = await s.navi(['loop', '--resume', runId]);
        expectExit(again, 2);
        expect(again.stderr).toMatch(/loop run .* ended completed \(gate_passed\) and cannot be resumed/);
      },
      T,
    );

    it(
      'max iterations → exit 3 (resumable); --resume --extend 2 continues at the next iteration with the hash history',
      async () => {
        const s = await scenario(backend, script(lookIteration('one'), [tc('read_file', { path: 'math.test.js' }), say('two')]));
        loopRepo(s.cwd, { loop: '{ max_iterations: 2 }' });
        const first = await s.navi(['loop', 'task.yaml', '-o', 'json']);
        expectExit(first, 3);
        const r1 = JSON.parse(first.stdout) as Record<string, unknown>;
        expect(r1).toMatchObject({ status: 'incomplete', reason: 'max_iterations', iterations: 2 });
        expect((r1.errors as string[]).join('\n')).toMatch(/resume with: navi loop --resume run_\w+ --extend 3/);
        expect(markerFiles(s.cwd)).toEqual([expect.stringMatching(/_loop-partial\.md$/)]);
        const runId = String(r1.run_id);
        const stored = await s.db.withStore((store) => store.loopRuns.get(runId));
        expect(stored).toMatchObject({ status: 'incomplete', iteration: 2, maxIterations: 2 });

        const noExtend = await s.navi(['loop', '--resume', runId]);
        expectExit(noExtend, 2);
        expect(noExtend.stderr).toMatch(/has used all 2 of its iterations; resume with more: navi loop --resume .* --extend 3/);

        s.fake.setScript(script(fixIteration()));
        const second = await s.navi(['loop', '--resume', runId, '--extend', '2', '-o', 'stream-json']);
        expectExit(second, 0);
        const events = expectLoopStream(second);
        expect(eventsOf(events, 'loop_started')[0]).toMatchObject({ resumed: true, start_iteration: 3, max_iterations: 4 });
        expect(eventsOf(events, 'iteration_status')[0]).toMatchObject({ iteration: 3, max_iterations: 4, previous_hash: stored!.hashHistory[1] });
        const rows = await s.db.withStore((store) => store.loopRuns.listIterations(runId));
        expect(rows.map((r) => r.iteration)).toEqual([1, 2, 3]);
      },
      T,
    );

    it(
      'SIGINT mid-iteration: exit 130, run saved as interrupted; resume finishes it',
      async () => {
        const s = await scenario(backend, { turns: [tc('read_file', { path: 'math.js' }), { content: 'slow', first_chunk_delay_ms: 600_000 }] });
        loopRepo(s.cwd);
        const child = s.start(['loop', 'task.yaml', '-o', 'stream-json']);
        await child.waitForEvent('tool_call');
        // Stopped while the iteration's second model call is in its (ten-minute) prefill.
        await until(() => s.chats().some((r) => r.turn === 1), 30_000, 'the second model call');
        child.kill('SIGINT');
        const run = await child.result;
        expectExit(run, 130);
        const events = expectLoopStream(run);
        expect(resultOf(run)).toMatchObject({ status: 'interrupted', reason: 'interrupted', exit_code: 130, iterations: 0 });
        expect(eventsOf(events, 'loop_complete')[0]).toMatchObject({ status: 'interrupted', resumable: true });
        const runId = String(resultOf(run).run_id);
        expect(await s.db.withStore((store) => store.loopRuns.get(runId))).toMatchObject({ status: 'interrupted', iteration: 0 });
        s.fake.setScript(script(fixIteration()));
        const resumed = await s.navi(['loop', '--resume', runId, '-o', 'json']);
        expectExit(resumed, 0);
        expect(JSON.parse(resumed.stdout)).toMatchObject({ status: 'success', iterations: 1 });
      },
      T,
    );

    it(
      'a token budget ends the run with exit 5; resume needs a larger --max-tokens and then completes',
      async () => {
        const s = await scenario(backend, script(lookIteration()));
        loopRepo(s.cwd, { extra: 'budget: { max_tokens: 100 }' });
        const first = await s.navi(['loop', 'task.yaml', '-o', 'json']);
        expectExit(first, 5);
        const r1 = JSON.parse(first.stdout) as Record<string, unknown>;
        expect(r1).toMatchObject({ status: 'budget_exhausted', reason: 'max_tokens', iterations: 1 });
        const runId = String(r1.run_id);
        const same = await s.navi(['loop', '--resume', runId]);
        expectExit(same, 2);
        expect(same.stderr).toMatch(/has spent \d+ of its 100 tokens; resume with a larger budget: --max-tokens \d+/);
        s.fake.setScript(script(fixIteration()));
        const more = await s.navi(['loop', '--resume', runId, '--max-tokens', '10000000', '-o', 'json']);
        expectExit(more, 0);
        expect(JSON.parse(more.stdout)).toMatchObject({ status: 'success', iterations: 2 });
      },
      T,
    );
  });
}, { both: 'resuming from what each store committed is the store contract' });
