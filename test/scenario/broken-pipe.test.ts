/**
 * A reader that goes away (issue 18, item 15): `navi run -o stream-json … | head -1` once exited
 * 0 although its output was cut. navi exits as a writer killed by SIGPIPE is reported by the
 * shell (`yes | head -1`: 141 = 128 + 13), quietly: no message, no stack trace.
 */
import { describe, expect, it } from 'vitest';
import { stackLines } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import { SCENARIO_TIMEOUT_MS, describeRun, scenario } from './helpers.js';

forEachBackend((backend) => {
  describe('broken pipe', () => {
    it('stream-json | head -1: exit 141, nothing on stderr', async () => {
      const s = await scenario(backend, { turns: [{ content: 'one two three four five six seven eight', chunk_delay_ms: 20 }], on_exhausted: 'error' });
      const p = s.start(['run', '-o', 'stream-json', 'count to eight']);
      // Like `head -1`: read the first event, then close the pipe.
      await p.waitForEvent('run_started');
      p.child.stdout?.destroy();
      const run = await p.result;
      expect(run.code, describeRun(run)).toBe(141);
      expect(stackLines(run.stderr)).toEqual([]);
      expect(run.stderr).toBe('');
    }, SCENARIO_TIMEOUT_MS);
  });
});
