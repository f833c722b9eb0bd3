/**
 * What text mode says about a loop's checks and its ending (issue 11, bug 7): `runs show`
 * prints why a check failed (the JSON output always had it), and the LOOP COMPLETE block ticks
 * "Marker created" for the marker it names.
 */
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { describeRun, expectExit, fixIteration, lookIteration, loopRepo, resultOf, scenario, script } from './helpers.js';

/** Per-test hang guard: far above the real time (CLI runs of seconds each under load). */
const T = 120_000;

forEachBackend((backend) => {
  describe('loop endings in text mode', () => {
    it(
      '`runs show` says which check failed, with its exit code and the end of its output',
      async () => {
        const s = await scenario(backend, script(lookIteration('Looked.')));
        loopRepo(s.cwd, { loop: '{ max_iterations: 1 }' });
        const run = await s.navi(['loop', 'task.yaml', '-o', 'json']);
        expectExit(run, 3);
        const runId = String(resultOf(run).run_id);
        const shown = await s.navi(['runs', 'show', runId]);
        expect(shown.code, describeRun(shown)).toBe(0);
        expect(shown.stdout).toMatch(/^check tests: FAILED \(exit 1, \d+ ms\)$/m);
        // node --test's own report of the failing assertion, as the JSON output carries it.
        expect(shown.stdout).toMatch(/^ {2}│ .*(fail|not ok|Expected|AssertionError)/m);
        const json = await s.navi(['runs', 'show', runId, '-o', 'json']);
        const tail = String((JSON.parse(json.stdout) as { iterations: Array<{ evidence: { checks: Array<{ output_tail: string }> } }> }).iterations[0]?.evidence.checks[0]?.output_tail);
        const lastLine = tail.trimEnd().split('\n').pop() ?? '';
        expect(shown.stdout).toContain(`  │ ${lastLine}`);
      },
      T,
    );

    it(
      'the LOOP COMPLETE block ticks "Marker created" beside the marker it wrote',
      async () => {
        const s = await scenario(backend, script(fixIteration()));
        loopRepo(s.cwd);
        const run = await s.navi(['loop', 'task.yaml']);
        expectExit(run, 0);
        const block = run.stdout.slice(run.stdout.indexOf('LOOP COMPLETE'));
        expect(block).toMatch(/- Marker: \.agent\/\.context-markers\/\S+\.md/);
        expect(block).toContain('  [x] Marker created');
        expect(block).not.toContain('[ ] Marker created');
      },
      T,
    );
  });
});
