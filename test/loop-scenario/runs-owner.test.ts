/**
 * Issue 18, item 6: a loop killed with `kill -9` stays `running` in the database until someone
 * resumes it; `navi runs list` (and `show`, and their JSON) say that its owner is gone, and how
 * to go on, while a loop that is still running is shown with its live owner.
 */
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { until } from '../scenario/helpers.js';
import { expectExit, lookIteration, loopRepo, scenario, tc } from './helpers.js';

type Run = { id: string; status: string; owner: { pid: number; host: string; since: string; alive: boolean | null } | null };

forEachBackend((backend) => {
  describe('runs list: the owner of a running loop', () => {
    it('alive while it runs; gone (text and -o json) once it was killed with SIGKILL', async () => {
      const turns = [...lookIteration('first look'), tc('read_file', { path: 'math.test.js' }), { content: 'never sent', first_chunk_delay_ms: 600_000 }];
      const s = await scenario(backend, { turns });
      loopRepo(s.cwd);
      const child = s.start(['loop', 'task.yaml', '-o', 'stream-json']);
      const started = await child.waitForEvent('loop_started');
      const runId = String(started.run_id);
      await until(() => s.chats().some((r) => r.turn === turns.length - 1), 30_000, 'the hanging model call');

      const live = await s.navi(['runs', 'list', '-o', 'json'], { host: false });
      expectExit(live, 0);
      const liveRun = (JSON.parse(live.stdout) as { runs: Run[] }).runs.find((r) => r.id === runId);
      expect(liveRun).toMatchObject({ status: 'running', owner: { pid: child.child.pid, alive: true } });
      const liveText = await s.navi(['runs', 'list'], { host: false });
      expect(liveText.stdout).not.toContain('gone');

      child.child.kill('SIGKILL');
      await child.result;
      const json = await s.navi(['runs', 'list', '-o', 'json'], { host: false });
      expectExit(json, 0);
      const run = (JSON.parse(json.stdout) as { runs: Run[] }).runs.find((r) => r.id === runId);
      expect(run).toMatchObject({ status: 'running', owner: { pid: child.child.pid, alive: false } });
      const text = await s.navi(['runs', 'list'], { host: false });
      expectExit(text, 0);
      const line = text.stdout.split('\n').find((l) => l.startsWith(runId));
      expect(line).toMatch(new RegExp(`running .* owner pid ${child.child.pid} on \\S+ is gone \\(its process has exited\\); resume with: navi loop --resume ${runId}`));
      const show = await s.navi(['runs', 'show', runId], { host: false });
      expect(show.stdout).toContain(`owner: pid ${child.child.pid}`);
      expect(show.stdout).toContain('is gone (its process has exited)');
    }, 120_000);
  });
}, { both: 'a killed loop\'s row and its owner as each store keeps them' });
