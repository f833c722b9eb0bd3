/**
 * The loop tells the truth (issue 18): a non-code task whose work is done and committed passes
 * the gate (an indicator that cannot apply is skipped and the threshold counts the ones that do).
 */
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { eventsOf, expectExit, expectLoopStream, git, loopRepo, resultOf, say, scenario, script, tc } from './helpers.js';

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
  });
});
