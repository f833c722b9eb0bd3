/**
 * The loop tells the truth (issue 18): a non-code task whose work is done and committed passes
 * the gate (an indicator that cannot apply is skipped and the threshold counts the ones that do).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { until } from '../scenario/helpers.js';
import { eventsOf, expectExit, expectLoopStream, fixIteration, git, iterationMessages, lookIteration, loopRepo, resultOf, say, scenario, script, tc } from './helpers.js';

/** Per-test hang guard: far above the real time. */
const T = 120_000;

forEachBackend((backend) => {
  describe('the loop tells the truth', () => {
    it(
      'a free-text non-code task, written and committed, exits through the gate (tests skipped: nothing to test)',
      async () => {
        const notes = [
          tc('write_file', { path: 'NOTES.txt', content: 'v1.2: add() adds.\n' }),
          tc('shell', { command: "git add NOTES.txt && git commit -qm 'Release notes for v1.2'" }),
          tc('loop_signal', { type: 'exit', success: true, reason: 'release notes written and committed' }),
          say('Wrote the release notes to NOTES.txt and committed them.'),
        ];
        // One iteration scripted: a second would fail the run (the script runs out).
        const s = await scenario(backend, script(notes));
        loopRepo(s.cwd);
        const run = await s.navi(['loop', 'Write short release notes for v1.2 into NOTES.txt and commit them', '-o', 'stream-json']);
        expectExit(run, 0);
        const events = expectLoopStream(run);
        const status = eventsOf(events, 'iteration_status')[0]!;
        expect(status.indicators).toMatchObject({ code_committed: true, tests_passing: 'skipped', ticket_closed: 'skipped' });
        expect(status.skipped).toMatchObject({ tests_passing: 'no checks or test command' });
        expect(String(status.block)).toContain('  [ ] Tests passing (skipped - no checks or test command)');
        expect(String(status.block)).toContain('  Heuristics: 1/4 (need 1+)');
        expect(eventsOf(events, 'exit_gate')[0]).toMatchObject({ decision: 'exit', heuristics_met: 1, heuristics_total: 4, heuristics_needed: 1 });
        expect(resultOf(run)).toMatchObject({ status: 'success', reason: 'gate_passed', iterations: 1 });
        expect(git(s.cwd, 'log', '--format=%s')).toMatch(/^Release notes for v1\.2\n/);
      },
      T,
    );

    it(
      'a run aborted by stagnation continues with --resume ID --clarify TEXT from its last iteration; the model gets the clarification',
      async () => {
        const s = await scenario(backend, script(lookIteration('a'), lookIteration('a'), lookIteration('a'), fixIteration()));
        loopRepo(s.cwd);
        const stuck = await s.navi(['loop', 'task.yaml', '-o', 'json']);
        expectExit(stuck, 4);
        const result = resultOf(stuck);
        expect(result).toMatchObject({ status: 'aborted', reason: 'stagnation', iterations: 3 });
        const runId = String(result.run_id);
        expect(result.errors).toContainEqual(`continue it with a clarification: navi loop --resume ${runId} --clarify "what the model missed"`);

        // Without a clarification it stays refused, and says how to go on.
        const bare = await s.navi(['loop', '--resume', runId]);
        expectExit(bare, 2);
        expect(bare.stderr).toContain(`navi loop --resume ${runId} --clarify "TEXT"`);

        const resumed = await s.navi(['loop', '--resume', runId, '--clarify', 'math.js subtracts; make it add', '-o', 'stream-json']);
        expectExit(resumed, 0);
        const events = expectLoopStream(resumed);
        expect(eventsOf(events, 'loop_started')[0]).toMatchObject({ resumed: true, start_iteration: 4 });
        expect(resultOf(resumed)).toMatchObject({ status: 'success', iterations: 4 });
        const messages = iterationMessages(s.chats());
        expect(messages).toHaveLength(4);
        expect(messages[3]).toContain('The user clarified what is blocking progress (act on it): math.js subtracts; make it add');
      },
      T,
    );

    it(
      'a check whose command does not exist is said in the first iteration (once), and each check\'s result shows live',
      async () => {
        const s = await scenario(backend, script(lookIteration('a'), lookIteration('b')));
        loopRepo(s.cwd);
        fs.writeFileSync(
          path.join(s.cwd, 'probe.yaml'),
          ['name: probe', 'prompt: "Make the failing test pass."', 'checks:', '  - { name: tests, run: "node --test" }', '  - { name: lint, run: "navi-no-such-linter --strict" }', ''].join('\n'),
        );
        const run = await s.navi(['loop', 'probe.yaml', '--max-iterations', '2']);
        expectExit(run, 3);
        const warnings = run.stderr.split('\n').filter((l) => l.startsWith('warning: check "lint" cannot run'));
        expect(warnings, run.stderr).toEqual(['warning: check "lint" cannot run (exit 127: command not found): `navi-no-such-linter --strict`. It fails every iteration whatever the model does; fix the task\'s checks (or install the command)']);
        const checkLines = run.stdout.split('\n').filter((l) => l.startsWith('Checks: '));
        expect(checkLines).toHaveLength(2);
        expect(checkLines[0]).toMatch(/^Checks: tests failed \(exit 1, \d+\.\d s\) · lint could not run \(exit 127: command not found\)$/);
      },
      T,
    );

    it(
      'a second loop in a tree where one runs is refused at once, naming the running loop; a dead loop\'s lock is taken over',
      async () => {
        const s = await scenario(backend, script(fixIteration(), fixIteration()));
        loopRepo(s.cwd);
        fs.mkdirSync(path.join(s.cwd, 'sub'));
        const release = s.fake.holdChats();
        const first = s.start(['loop', 'task.yaml', '-o', 'stream-json']);
        const started = await first.waitForEvent('loop_started');
        await first.waitForEvent('iteration_started');
        // The first loop's request is at the model (held there), so the count below is the second loop's doing.
        await until(() => s.chats().length === 1, 30_000, "the first loop's model request");
        // From a subfolder of the same work tree: the same tree, the same lock.
        const second = await s.navi(['loop', 'Tidy up the README', '--cwd', path.join(s.cwd, 'sub')]);
        release();
        expectExit(second, 2);
        expect(second.stderr).toContain(`loop run ${String(started.run_id)} is running in this working tree`);
        expect(s.chats().length, 'the second loop never called the model').toBe(1);
        const done = await first.result;
        expectExit(done, 0);
        expect(fs.existsSync(path.join(s.cwd, '.agent', 'loop.lock')), 'released at the end').toBe(false);

        // A lock left by a loop that died (kill -9): its pid is gone, so the next loop takes the tree.
        const dead = spawnSync(process.execPath, ['-e', '']).pid;
        fs.writeFileSync(path.join(s.cwd, '.agent', 'loop.lock'), JSON.stringify({ run_id: 'run_dead', pid: dead, host: os.hostname(), since: new Date().toISOString() }));
        git(s.cwd, 'reset', '-q', '--hard', 'HEAD~1');
        const next = await s.navi(['loop', 'task.yaml', '-o', 'stream-json']);
        expectExit(next, 0);
        const warning = eventsOf(expectLoopStream(next), 'warning').find((w) => w.code === 'loop_lock_taken_over');
        expect(String(warning?.message)).toContain('loop run run_dead left its lock on this working tree');
      },
      T,
    );

    it('--clarify without --resume is invalid input', async () => {
      const s = await scenario(backend, script());
      loopRepo(s.cwd);
      const run = await s.navi(['loop', 'task.yaml', '--clarify', 'x']);
      expectExit(run, 2);
      expect(run.stderr).toContain('--clarify only applies with --resume RUN_ID');
    });
  });
});
