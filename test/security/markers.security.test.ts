/**
 * Loop markers stay in the working directory: with `.agent` a symlink to a directory outside
 * (planted by a checkout, or by the model's shell), the loop ends as usual, says the marker was
 * not written (`marker_not_written`) and writes nothing outside.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { eventsOf, expectExit, expectLoopStream, lookIteration, loopRepo, scenario, script } from '../loop-scenario/helpers.js';
import { makeSentinel, sentinelChanges } from './helpers.js';

forEachBackend((backend) => {
  describe('loop markers', () => {
    it('a symlinked .agent leading out: no marker written through it, a marker_not_written warning, the loop still ends cleanly', async () => {
      const sentinel = makeSentinel();
      const s = await scenario(backend, script(lookIteration()));
      loopRepo(s.cwd, { loop: '{ max_iterations: 1 }' });
      fs.symlinkSync(sentinel.dir, path.join(s.cwd, '.agent'));
      const run = await s.navi(['loop', 'task.yaml', '-o', 'stream-json'], { timeoutMs: 60_000 });
      expectExit(run, 3);
      const events = expectLoopStream(run);
      const warning = eventsOf(events, 'warning').find((w) => w.code === 'marker_not_written');
      expect(String(warning?.message)).toMatch(/^could not write the partial marker: .*\.agent\/\.context-markers leads outside the working directory through a symlink; no marker written$/);
      expect(eventsOf(events, 'loop_complete')[0]).toMatchObject({ status: 'incomplete', marker: null });
      expect(sentinelChanges(sentinel)).toEqual([]);
      expect(fs.existsSync(path.join(sentinel.dir, '.context-markers'))).toBe(false);
    }, 60_000);
  });
});
