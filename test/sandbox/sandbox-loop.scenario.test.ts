/**
 * `sandbox` in a task file, end to end (issue 22): a loop whose model runs the tests and commits
 * its fix with the shell tool, every command inside bubblewrap, the task's checks too (issue 35).
 */
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { LONG_SCENARIO_TIMEOUT_MS } from '../scenario/helpers.js';
import { describeRun, eventsOf, expectLoopStream, fixIteration, git, lookIteration, loopRepo, scenario, script } from '../loop-scenario/helpers.js';

forEachBackend(
  (backend) => {
    describe('sandbox in a task file', () => {
      it(
        'a loop under sandbox: workspace-write fixes, tests and commits inside the sandbox; loop_started shows the mode',
        async () => {
          const s = await scenario(backend, script(fixIteration()));
          loopRepo(s.cwd, { extra: 'sandbox: workspace-write' });
          const run = await s.navi(['loop', 'task.yaml', '-o', 'stream-json']);
          expect(run.code, describeRun(run)).toBe(0);
          const events = expectLoopStream(run);
          expect(eventsOf(events, 'loop_started')[0]).toMatchObject({ sandbox: 'workspace-write', sandbox_network: false });
          expect(eventsOf(events, 'run_started')[0]).toMatchObject({ sandbox: 'workspace-write' });
          expect(git(s.cwd, 'log', '--format=%s', '-1').trim()).toBe('Fix add()');
          expect(eventsOf(events, 'warning').filter((w) => w.code === 'sandbox_refused')).toEqual([]);
        },
        LONG_SCENARIO_TIMEOUT_MS,
      );

      it(
        'a resumed run keeps the sandbox its task file set',
        async () => {
          const s = await scenario(backend, script(lookIteration()));
          loopRepo(s.cwd, { loop: '{ max_iterations: 1 }', extra: 'sandbox: read-only' });
          const first = await s.navi(['loop', 'task.yaml', '-o', 'json']);
          expect(first.code, describeRun(first)).toBe(3);
          const runId = String((JSON.parse(first.stdout) as Record<string, unknown>).run_id);
          s.fake.setScript(script(lookIteration()));
          const resumed = await s.navi(['loop', '--resume', runId, '--extend', '1', '-o', 'stream-json']);
          expect(eventsOf(expectLoopStream(resumed), 'loop_started')[0]).toMatchObject({ resumed: true, sandbox: 'read-only' });
        },
        LONG_SCENARIO_TIMEOUT_MS,
      );

      it(
        'a resumed run keeps the sandbox --sandbox set (never a silent run without it)',
        async () => {
          const s = await scenario(backend, script(lookIteration()));
          loopRepo(s.cwd, { loop: '{ max_iterations: 1 }' });
          const first = await s.navi(['loop', 'task.yaml', '--sandbox', 'read-only', '-o', 'json']);
          expect(first.code, describeRun(first)).toBe(3);
          const runId = String((JSON.parse(first.stdout) as Record<string, unknown>).run_id);
          s.fake.setScript(script(lookIteration()));
          const resumed = await s.navi(['loop', '--resume', runId, '--extend', '1', '-o', 'stream-json']);
          expect(eventsOf(expectLoopStream(resumed), 'loop_started')[0]).toMatchObject({ resumed: true, sandbox: 'read-only' });
        },
        LONG_SCENARIO_TIMEOUT_MS,
      );
    });
  },
);
