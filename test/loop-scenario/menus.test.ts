/**
 * The loop's menus say the right thing (issue 18 item 20), as a person at a terminal meets them
 * (a pseudo-terminal): once the exit gate has passed, strict approval asks whether to finish (not
 * "Accept iteration N and continue?"), and the stagnation menu lists its options once.
 */
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { fixIteration, lookIteration, loopRepo, scenario, script } from './helpers.js';
import { hasScript, runInPty } from './pty.js';

forEachBackend(
  (backend) => {
    describe.skipIf(!hasScript)('loop menus at a terminal', () => {
      it(
        'strict approval after the gate said EXIT asks to finish; Finish (the default) completes the loop',
        async () => {
          const s = await scenario(backend, script(fixIteration()));
          loopRepo(s.cwd);
          const { code, screen } = await runInPty(s, ['loop', 'task.yaml', '--approval', 'strict'], ['\r'], /Choose 1-3 \[1\]: /);
          expect(code, screen).toBe(0);
          expect(screen).toContain('The exit gate passed on iteration 1 (EXIT: 2/5 heuristics + explicit signal). Finish the loop here?');
          expect(screen).toMatch(/1\. \[Finish\][\s\S]*2\. \[Adjust\][\s\S]*3\. \[Abort\]/);
          expect(screen).not.toContain('Accept iteration 1 and continue?');
          expect(screen).toContain('→ Finish (terminal)');
          expect(screen).toContain('LOOP COMPLETE');
        },
        120_000,
      );

      it(
        'the stagnation menu shows its options once; Abort ends the run (exit 4)',
        async () => {
          const s = await scenario(backend, script(lookIteration('a'), lookIteration('a'), lookIteration('a')));
          loopRepo(s.cwd);
          const { code, screen } = await runInPty(s, ['loop', 'task.yaml'], ['3\r'], /Choose 1-3: /);
          expect(code, screen).toBe(4);
          expect(screen).toContain('STAGNATION DETECTED');
          expect(screen.match(/\[Clarify\]/g), screen).toHaveLength(1);
          expect(screen.match(/\[Continue\]/g), screen).toHaveLength(1);
        },
        120_000,
      );
    });
  },
  { only: 'pglite' },
);
