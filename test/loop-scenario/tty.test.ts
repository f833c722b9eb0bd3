/**
 * A person at a terminal (SPEC §7): `navi loop --approval strict` inside a pseudo-terminal
 * (`script`) shows the approval menu after each NAVIGATOR_STATUS block and reads the answer —
 * Adjust with feedback, then Continue — and the feedback reaches the next iteration.
 */
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { fixIteration, iterationMessages, lookIteration, loopRepo, scenario, script } from './helpers.js';
import { hasScript, runInPty } from './pty.js';

forEachBackend(
  (backend) => {
    describe.skipIf(!hasScript)('interactive approval in a pseudo-terminal', () => {
      it(
        'Adjust with feedback, then Continue; the loop completes and the feedback reached the model',
        async () => {
          const s = await scenario(backend, script(lookIteration('Looked.'), fixIteration()));
          loopRepo(s.cwd);
          // Menu 1: "2" (Adjust), then the feedback line; menu 2: Enter (the default, Continue).
          const { code, screen } = await runInPty(s, ['loop', 'task.yaml', '--approval', 'strict'], ['2\r', 'use a plus sign\r', '\r'], /Choose 1-3 \[1\]: |Feedback for the next iteration: /);
          expect(code, screen).toBe(0);
          expect(screen).toContain('NAVIGATOR_STATUS');
          expect(screen).toContain('Accept iteration 1 and continue?');
          expect(screen).toMatch(/1\. \[Continue\][\s\S]*2\. \[Adjust\][\s\S]*3\. \[Abort\]/);
          expect(screen).toContain('→ Adjust: use a plus sign (terminal)');
          // Iteration 2 passed the exit gate: its approval is the completion menu (Finish).
          expect(screen).toContain('→ Finish (terminal)');
          expect(screen).toContain('LOOP COMPLETE');
          expect(iterationMessages(s.chats())[1]).toContain('Feedback from the user on iteration 1 (act on it in this iteration): use a plus sign');
        },
        120_000,
      );
    });
  },
  { only: 'pglite' },
);
