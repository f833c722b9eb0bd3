/**
 * Ctrl-C at a loop menu (issue 18 item 3): the iteration that just finished is committed before
 * anyone is asked, so the interrupt keeps it ("after 1/N iterations"), and `--resume` asks the
 * pending question again instead of running the iteration (its writes and commits) a second time.
 * In a pseudo-terminal, as a person meets it: the approval menu and the max-iterations menu.
 */
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { fixIteration, git, iterationMessages, lookIteration, loopRepo, scenario, script } from './helpers.js';
import { hasScript, runInPty } from './pty.js';

const CTRL_C = '\x03';

function runIdOf(screen: string): string {
  const id = /navi loop --resume (run_[A-Za-z0-9_-]+)/.exec(screen)?.[1];
  expect(id, screen).toBeDefined();
  return id as string;
}

forEachBackend(
  (backend) => {
    describe.skipIf(!hasScript)('Ctrl-C at a loop menu keeps the iteration', () => {
      it(
        'approval menu: interrupted after 1 iteration; the resume asks "Accept iteration 1" again and goes on with iteration 2',
        async () => {
          const s = await scenario(backend, script(lookIteration('Looked.'), fixIteration()));
          loopRepo(s.cwd);
          const first = await runInPty(s, ['loop', 'task.yaml', '--approval', 'strict'], [CTRL_C], /Choose 1-3 \[1\]: /);
          expect(first.code, first.screen).toBe(130);
          expect(first.screen).toContain('Accept iteration 1 and continue?');
          const runId = runIdOf(first.screen);
          const shown = await s.navi(['runs', 'show', runId, '-o', 'json']);
          expect(shown.code, shown.stderr).toBe(0);
          const stored = JSON.parse(shown.stdout) as { run: { iteration: number; status: string }; iterations: unknown[] };
          expect(stored.run).toMatchObject({ iteration: 1, status: 'interrupted' });
          expect(stored.iterations).toHaveLength(1);

          const second = await runInPty(s, ['loop', '--resume', runId], ['\r', '\r'], /Choose 1-3 \[1\]: /);
          expect(second.code, second.screen).toBe(0);
          expect(second.screen).toContain('Accept iteration 1 and continue?');
          expect(second.screen).toContain('LOOP COMPLETE');
          // Iteration 1 ran once: two iteration messages in all, the second one iteration 2's.
          const messages = iterationMessages(s.chats());
          expect(messages).toHaveLength(2);
          expect(messages[1]).toMatch(/^LOOP MODE — iteration 2 of/);
          expect(git(s.cwd, 'log', '--format=%s')).toMatch(/^Fix add\(\)\ninit/);
        },
        180_000,
      );

      it(
        'max-iterations menu: interrupted after 1/1 iterations; the resume asks again, Extend runs iteration 2',
        async () => {
          const s = await scenario(backend, script(lookIteration('Looked.'), fixIteration()));
          loopRepo(s.cwd, { loop: '{ max_iterations: 1 }' });
          const first = await runInPty(s, ['loop', 'task.yaml'], [CTRL_C], /Choose 1-3: /);
          expect(first.code, first.screen).toBe(130);
          expect(first.screen).toContain('Max iterations (1) reached');
          const runId = runIdOf(first.screen);

          const second = await runInPty(s, ['loop', '--resume', runId], ['1\r'], /Choose 1-3: /);
          expect(second.code, second.screen).toBe(0);
          expect(second.screen).toContain('Max iterations (1) reached');
          expect(second.screen).toContain('LOOP COMPLETE');
          expect(iterationMessages(s.chats())).toHaveLength(2);
        },
        180_000,
      );
    });
  },
  { only: 'pglite' },
);
