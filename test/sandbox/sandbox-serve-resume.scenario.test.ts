/**
 * One loop set-up (issue 35 item 14): a run `navi serve --sandbox` starts stores the sandbox it
 * really ran in, as `navi loop` does, so `navi loop --resume` of it runs sandboxed too. Serve's
 * copy of the loop set-up once stored the bare task, and the resumed run ran with no sandbox.
 */
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { LONG_SCENARIO_TIMEOUT_MS } from '../scenario/helpers.js';
import { eventsOf, expectLoopStream, lookIteration, loopRepo, scenario, script } from '../loop-scenario/helpers.js';
import { eventually, serve, stopServe } from '../serve/helpers.js';

forEachBackend(
  (backend) => {
    describe('a loop started by navi serve --sandbox', () => {
      it(
        'keeps its sandbox when navi loop --resume continues it',
        async () => {
          const s = await scenario(backend, script(lookIteration()));
          loopRepo(s.cwd, { loop: '{ max_iterations: 1 }' });
          const srv = await serve(s, ['--cwd', s.cwd, '--sandbox', 'read-only']);
          const started = await srv.api('POST', '/runs', { task: 'task.yaml' });
          expect(started.status).toBe(201);
          const runId = String(started.body.id);
          // Its one iteration done, it waits on the max-iterations prompt; stopping serve saves it.
          await eventually(async () => {
            const r = await srv.api('GET', `/runs/${runId}`);
            return r.body.pending_decision !== null ? r : undefined;
          }, 'the run waiting after its one iteration');
          expect(await stopServe(srv)).toBe(130);
          s.fake.setScript(script(lookIteration()));
          const resumed = await s.navi(['loop', '--resume', runId, '--extend', '1', '-o', 'stream-json']);
          expect(eventsOf(expectLoopStream(resumed), 'loop_started')[0]).toMatchObject({ resumed: true, sandbox: 'read-only' });
        },
        LONG_SCENARIO_TIMEOUT_MS,
      );
    });
  },
);
