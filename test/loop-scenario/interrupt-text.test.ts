/**
 * Ctrl-C in a text-mode loop (issue 18, item 15): the stop is said once and the resume command
 * once — the LOOP STOPPED block on stdout names it, stderr does not repeat it.
 */
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { until } from '../scenario/helpers.js';
import { expectExit, loopRepo, scenario } from './helpers.js';

/** Hang guard: far above the real few seconds. */
const T = 120_000;

forEachBackend((backend) => {
  describe('loop interrupt in text mode', () => {
    it(
      'SIGINT while the model thinks: exit 130, the resume command said once',
      async () => {
        // The model never answers within the test: navi is stopped while waiting for it.
        const s = await scenario(backend, { turns: [{ content: 'never shown', first_chunk_delay_ms: 100_000 }] });
        loopRepo(s.cwd);
        const p = s.start(['loop', 'task.yaml']);
        await until(() => s.chats().length > 0, 60_000, 'the first model request');
        p.kill('SIGINT');
        const run = await p.result;
        expectExit(run, 130);
        const both = `${run.stdout}\n${run.stderr}`;
        expect(both.match(/navi loop --resume run_\w+/g), both).toHaveLength(1);
        expect(run.stdout).toMatch(/Resume with: navi loop --resume run_\w+/);
        // Beside the notice of the signal, one line says the run stopped; the resume hint is not a second error.
        const lines = run.stderr.split('\n').filter((l) => l.startsWith('navi: ') && !l.includes('SIGINT received'));
        expect(lines, run.stderr).toEqual(['navi: interrupted; the run is saved']);
      },
      T,
    );
  });
});
