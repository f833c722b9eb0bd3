/**
 * Issue 18 items 7 and 8: what runs is what was typed. `navi loop NAME` (the name `navi tasks
 * list` prints) and `navi loop tasks/FILE` (no extension) run the task file, never a free-text
 * loop without its checks; a lone word that names no task, and words after a task file, are
 * exit 2 before anything runs; a flag with a value before `loop` leaves it the loop command.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { describeRun, expectExit, fixIteration, git, iterationMessages, loopRepo, resultOf, scenario, script, type Scenario } from './helpers.js';

const T = 120_000;
const PROMPT = 'Make the failing test pass by fixing math.js.';

/** loopRepo with its task at tasks/make-done.yaml (its `name:` stays fix-add). */
function repoWithTaskDir(s: Scenario): void {
  loopRepo(s.cwd);
  fs.mkdirSync(path.join(s.cwd, 'tasks'));
  git(s.cwd, 'mv', 'task.yaml', 'tasks/make-done.yaml');
  git(s.cwd, 'commit', '-qm', 'task under tasks/');
}

forEachBackend((backend) => {
  describe('task names and paths (issue 18 items 7, 8)', () => {
    it('`navi --record FILE loop fix-add` (the name tasks list prints, a value flag before the command) runs the task file with its checks', async () => {
      const s = await scenario(backend, script(fixIteration()));
      repoWithTaskDir(s);
      const list = await s.navi(['tasks', 'list']);
      expect(list.stdout).toMatch(/^fix-add\s+tasks\/make-done\.yaml\s+project/m);
      const run = await s.navi(['--record', 'rec.jsonl', '-o', 'json', 'loop', 'fix-add']);
      expectExit(run, 0);
      expect(resultOf(run).run_id, describeRun(run)).toMatch(/^run_/);
      const [first] = iterationMessages(s.chats());
      expect(first).toContain(PROMPT);
      expect(fs.existsSync(path.join(s.cwd, 'rec.jsonl'))).toBe(true);
    }, T);

    it('`navi loop tasks/make-done` (no extension) runs tasks/make-done.yaml', async () => {
      const s = await scenario(backend, script(fixIteration()));
      repoWithTaskDir(s);
      const run = await s.navi(['loop', 'tasks/make-done', '-o', 'json']);
      expectExit(run, 0);
      expect(resultOf(run).run_id).toMatch(/^run_/);
      expect(iterationMessages(s.chats())[0]).toContain(PROMPT);
    }, T);

    it('extra words after a task file, a lone word naming no task, a missing path: exit 2 with near names; no model call', async () => {
      const s = await scenario(backend, script(fixIteration()));
      repoWithTaskDir(s);
      const extra = await s.navi(['loop', 'tasks/make-done.yaml', 'extra', 'words']);
      expectExit(extra, 2);
      expect(extra.stderr).toMatch(/extra words after the task file tasks\/make-done\.yaml: 'extra words'/);
      const typo = await s.navi(['loop', 'make-don']);
      expectExit(typo, 2);
      expect(typo.stderr).toMatch(/no task named 'make-don' .*near: make-done/);
      const missing = await s.navi(['loop', 'tasks/nothing-here']);
      expectExit(missing, 2);
      expect(missing.stderr).toMatch(/no task named 'tasks\/nothing-here'/);
      expect(s.chats()).toHaveLength(0);
    }, T);
  });
});
