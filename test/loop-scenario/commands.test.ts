/**
 * The commands around loop mode: `navi tasks list|show|validate` (no database, no model),
 * `navi runs list|show`, and `navi run` entering loop mode by itself (trigger phrase,
 * loop_mode.enabled) unless `--no-loop`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanEnv, runNavi } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import { eventsOf, expectExit, expectLoopStream, fixIteration, lookIteration, loopRepo, resultOf, say, scenario, script, tc } from './helpers.js';
import { tempDir } from '../scenario/helpers.js';

/** Per-test hang guard: far above the real time (CLI runs of seconds each under load). */
const T = 120_000;

describe('navi tasks', () => {
  it('list, show and validate read YAML only: no database is created, no model is called', async () => {
    const cwd = tempDir('tasks');
    const dataDir = path.join(cwd, 'never-created');
    fs.mkdirSync(path.join(cwd, 'tasks'));
    fs.writeFileSync(path.join(cwd, 'tasks', 'good.yaml'), 'prompt: Fix it.\nchecks:\n  - { name: tests, run: "npm test" }\n');
    fs.writeFileSync(path.join(cwd, 'tasks', 'bad.yaml'), 'prompt: ""\nloop: { max_iterations: 99, colour: red }\nchecks:\n  - { name: t }\nextra: 1\n');
    const env = cleanEnv({ NAVI_DATA_DIR: dataDir, OLLAMA_HOST: 'http://127.0.0.1:9' });

    const list = await runNavi(['tasks', 'list'], { cwd, env });
    expectExit(list, 0);
    expect(list.stdout).toMatch(/good\s+tasks\/good\.yaml\s+project\s+loop\s+1 check/);
    expect(list.stdout).toMatch(/\(invalid\)\s+tasks\/bad\.yaml\s+project\s+invalid: \d+ problem/);
    expect(list.stdout).toMatch(/fix-failing-tests\s+.*shipped/);

    const validate = await runNavi(['tasks', 'validate'], { cwd, env });
    expectExit(validate, 2);
    expect(validate.stdout).toContain('ok  tasks/good.yaml');
    for (const p of [/tasks\/bad\.yaml:1:\d+: prompt: must not be empty/, /tasks\/bad\.yaml:2:\d+: loop\.max_iterations: /, /loop\.colour: unknown key/, /checks\[0\]\.run: is required/, /tasks\/bad\.yaml:5:1: extra: unknown key/]) {
      expect(validate.stdout).toMatch(p);
    }
    expect(validate.stderr).toMatch(/^navi: \d+ problems in 1 task file\n$/);

    const one = await runNavi(['tasks', 'validate', 'tasks/good.yaml', '-o', 'json'], { cwd, env });
    expectExit(one, 0);
    expect(JSON.parse(one.stdout)).toEqual({ files: [{ file: 'tasks/good.yaml', valid: true, problems: [] }] });

    const show = await runNavi(['tasks', 'show', 'good', '-o', 'json'], { cwd, env });
    expectExit(show, 0);
    expect(JSON.parse(show.stdout)).toMatchObject({ task: { name: 'good', prompt: 'Fix it.', loop_mode: true, checks: [{ name: 'tests', run: 'npm test', timeout_s: 600 }] } });
    expect(fs.existsSync(dataDir)).toBe(false);
  });
});

forEachBackend((backend) => {
  describe('navi runs', () => {
    it(
      'list and show a run with its iterations, status blocks, decisions and reasons (text and json)',
      async () => {
        const s = await scenario(backend, script(lookIteration(), fixIteration()));
        loopRepo(s.cwd);
        const loop = await s.navi(['loop', 'task.yaml', '-o', 'json']);
        expectExit(loop, 0);
        const runId = String((JSON.parse(loop.stdout) as Record<string, unknown>).run_id);
        const list = await s.navi(['runs', 'list'], { host: false });
        expectExit(list, 0);
        expect(list.stdout).toMatch(new RegExp(`^${runId}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d  completed\\s+2/5  fix-add \\(gate_passed\\)\\n$`));
        const show = await s.navi(['runs', 'show', runId], { host: false });
        expectExit(show, 0);
        expect(show.stdout).toMatch(/── iteration 1: RESEARCH, hash [0-9a-f]{6}, gate continue \(CONTINUE: 0\/5 heuristics, no exit signal\)/);
        expect(show.stdout).toMatch(/── iteration 2: VERIFY, hash [0-9a-f]{6}, gate exit \(EXIT: 2\/5 heuristics \+ explicit signal\)/);
        expect(show.stdout.match(/NAVIGATOR_STATUS/g)).toHaveLength(2);
        const json = await s.navi(['runs', 'show', runId, '-o', 'json'], { host: false });
        const data = JSON.parse(json.stdout) as { run: Record<string, unknown>; iterations: Array<Record<string, unknown>> };
        expect(data.run).toMatchObject({ id: runId, status: 'completed', iteration: 2, task_name: 'fix-add' });
        expect(data.iterations.map((i) => i.gate_decision)).toEqual(['continue', 'exit']);
        expect(data.iterations[1]?.evidence).toMatchObject({ checks: [{ name: 'tests', exit_code: 0 }] });
        const missing = await s.navi(['runs', 'show', 'run_nope'], { host: false });
        expectExit(missing, 2); // not found is invalid input, in every command
        expect(missing.stderr).toMatch(/no loop run 'run_nope'; see: navi runs list/);
      },
      T,
    );
  });
});

forEachBackend(
  (backend) => {
    describe('navi run entering loop mode', () => {
      it(
        'a trigger phrase enters loop mode (said on stderr and in a warning event); --no-loop stays one-shot',
        async () => {
          const s = await scenario(backend, script(fixIteration()));
          loopRepo(s.cwd);
          const run = await s.navi(['run', '-o', 'stream-json', 'Fix add() in math.js and keep going until complete.']);
          expectExit(run, 0);
          const events = expectLoopStream(run);
          expect(events[0]?.type).toBe('loop_started');
          const warning = eventsOf(events, 'warning')[0];
          expect(warning).toMatchObject({ code: 'loop_mode_entered' });
          expect(String(warning?.message)).toContain('the prompt says "keep going until complete"');
          expect(run.stderr).toContain('entering loop mode: the prompt says "keep going until complete"');
          expect(resultOf(run)).toMatchObject({ status: 'success', reason: 'gate_passed' });

          s.fake.setScript({ turns: [tc('read_file', { path: 'math.js' }), say('It subtracts.')] });
          const once = await s.navi(['run', '--no-loop', '-o', 'stream-json', 'Look at math.js, keep going until complete.']);
          expectExit(once, 0);
          expect(once.events.map((e) => e.type)).not.toContain('loop_started');
        },
        T,
      );

      it(
        'loop_mode.enabled in .nav-config.json makes navi run loop; a navi inside a loop never loops again',
        async () => {
          const s = await scenario(backend, script(lookIteration()));
          loopRepo(s.cwd);
          fs.writeFileSync(path.join(s.cwd, '.nav-config.json'), JSON.stringify({ loop_mode: { enabled: true, max_iterations: 1 } }));
          const run = await s.navi(['run', '-o', 'json', 'Have a look at math.js.']);
          expectExit(run, 3);
          expect(JSON.parse(run.stdout)).toMatchObject({ status: 'incomplete', reason: 'max_iterations', iterations: 1 });
          expect(run.stderr).toContain('entering loop mode: loop_mode.enabled is true');

          const nested = await s.navi(['loop', 'task.yaml'], { env: { NAVI_LOOP_RUN_ID: 'run_outer' } });
          expectExit(nested, 2);
          expect(nested.stderr).toMatch(/loops never nest: this navi runs inside loop run run_outer/);
          s.fake.setScript({ turns: [say('one shot')] });
          const inner = await s.navi(['run', '-o', 'json', 'loop mode please'], { env: { NAVI_LOOP_RUN_ID: 'run_outer' } });
          expectExit(inner, 0);
          expect(JSON.parse(inner.stdout)).toMatchObject({ result: 'one shot' });
        },
        T,
      );
    });
  },
  { only: 'pglite' },
);
