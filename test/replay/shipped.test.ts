/**
 * The shipped profiles (default, coder, researcher) and shipped tasks (write-doc,
 * fix-failing-tests) end to end, replayed from recordings with no model server at all: the
 * built CLI with `--replay`, in a fresh project, on both backends. Every request navi makes must
 * match the recorded one byte for byte (after redaction), so a change to a prompt, a profile or
 * a tool schema fails here with the diff — if it is intended, run
 * `npm run build && tsx scripts/record-fixtures.ts` and commit the new recordings.
 * Also the demo's bundled recording (`npm run demo`), which must stay in step the same way.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeRun, eventsOf, expectValidStream, LONG_SCENARIO_TIMEOUT_MS, resultOf, tempDir } from '../scenario/helpers.js';
import { cleanEnv, runNavi } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import { closedPort } from '../support/ports.js';
import { CASES, GIT_ENV, prepareProject, recordingOf } from './replay-cases.js';
import { demoEnv, prepareDemoProject, RECORDING as DEMO_RECORDING } from '../../scripts/demo-project.js';

const STALE = 'the recording no longer matches what navi sends; if the change is intended: npm run build && tsx scripts/record-fixtures.ts';

forEachBackend((backend) => {
  describe('shipped profiles and tasks, replayed', () => {
    for (const c of CASES) {
      it(
        `${c.name}: ${c.args.slice(0, 3).join(' ')} replays with the recorded tool calls, answer and exit code`,
        async () => {
          const db = await backend.fresh();
          const cwd = tempDir(c.name);
          prepareProject(c, cwd);
          // A dead host: nothing may be contacted (the replay answers everything).
          const host = `http://127.0.0.1:${await closedPort()}`;
          const run = await runNavi([...c.args, '--replay', recordingOf(c), '--ollama-host', host, '-o', 'stream-json'], {
            cwd,
            env: cleanEnv({ ...db.env, ...GIT_ENV }),
            timeoutMs: 90_000,
          });
          expect(run.code, `${STALE}\n${describeRun(run)}`).toBe(c.expect.exit);
          const events = expectValidStream(run);
          expect(eventsOf(events, 'tool_call').map((e) => e.name)).toEqual(c.expect.tools);
          expect(String(resultOf(run).result)).toMatch(c.expect.result);
          if (c.expect.loopStatus !== undefined) expect(eventsOf(events, 'loop_complete')[0]?.status).toBe(c.expect.loopStatus);
        },
        LONG_SCENARIO_TIMEOUT_MS,
      );
    }
  });
});

forEachBackend(
  (backend) => {
    describe('npm run demo', () => {
      it(
        'the bundled recording replays: a sub-agent, a blocked exit, then a completed loop (exit 0)',
        async () => {
          const db = await backend.fresh();
          const project = tempDir('demo');
          prepareDemoProject(project);
          const env = cleanEnv({ ...db.env, ...demoGitEnv() });
          const run = await runNavi(['loop', 'task.yaml', '--replay', DEMO_RECORDING, '-o', 'stream-json'], { cwd: project, env, timeoutMs: 90_000 });
          expect(run.code, `the demo recording is stale: npm run build && tsx scripts/record-demo.ts\n${describeRun(run)}`).toBe(0);
          const events = expectValidStream(run);
          expect(events.some((e) => e.type === 'tool_call' && e.name === 'spawn_agent')).toBe(true);
          expect(events.some((e) => e.is_subagent === true && e.type === 'thinking_delta')).toBe(true);
          expect(eventsOf(events, 'exit_gate').map((e) => e.decision)).toEqual(['blocked', 'exit']);
          expect(fs.readFileSync(path.join(project, 'math.js'), 'utf8')).toContain('return a + b;');
        },
        LONG_SCENARIO_TIMEOUT_MS,
      );
    });
  },
);

/** The demo's fixed git identity, as `demoEnv` sets it. */
function demoGitEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(demoEnv({})).filter((e): e is [string, string] => e[0].startsWith('GIT_') && e[1] !== undefined));
}
