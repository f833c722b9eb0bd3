/**
 * Writing is executing, through git: a model that can write `.git/config` (or plant a bare
 * repository in a directory that is not one) gets a command run by navi's own loop-mode
 * `git status`. Both sides are closed: the file tools refuse `.git/` (test/tools), and the
 * probe runs git with the command-running settings off. Here: the probe against planted
 * configuration, then whole loops through the built CLI.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createGitProbe } from '../../src/loop/git-probe.js';
import { forEachBackend } from '../support/databases.js';
import { eventsOf, expectExit, expectLoopStream, loopRepo, say, scenario, script, tc } from '../loop-scenario/helpers.js';
import { tempDir } from '../scenario/helpers.js';

const T = 40_000;

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' });
}

/** A committed repository with `file.txt` modified in the work tree. */
function repo(): string {
  const cwd = tempDir('git-probe');
  git(cwd, 'init', '-q');
  git(cwd, 'config', 'user.email', 'probe@test');
  git(cwd, 'config', 'user.name', 'Probe');
  fs.writeFileSync(path.join(cwd, 'file.txt'), 'one\n');
  git(cwd, 'add', '-A');
  git(cwd, 'commit', '-qm', 'one');
  fs.writeFileSync(path.join(cwd, 'file.txt'), 'two\n');
  return cwd;
}

/** Files a planted bare repository needs in `dir`, whose config runs `touch <marker>` on `git status`. */
function bareRepoFiles(dir: string, marker: string): Record<string, string> {
  return {
    HEAD: 'ref: refs/heads/main\n',
    config: `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ${dir}\n\tfsmonitor = "touch ${marker}; echo"\n`,
    'objects/info/keep': '',
    'refs/heads/keep': '',
  };
}

/** Every question the loop runner asks. */
async function probeEverything(cwd: string): Promise<void> {
  const systemGit = createGitProbe();
  await systemGit.isRepo(cwd);
  await systemGit.head(cwd);
  await systemGit.status(cwd);
  await systemGit.commitsSince(cwd, null);
  await systemGit.changedFiles(cwd, null);
  const head = await systemGit.head(cwd);
  await systemGit.changedFiles(cwd, head, head ?? undefined);
}

describe('the git probe runs no command from the repository', () => {
  it('core.fsmonitor, hooks, diff.external and textconv in .git/config do not run; the answers are still right', async () => {
    const cwd = repo();
    const marker = path.join(tempDir('marker'), 'RAN');
    const cmd = `touch ${marker}; echo`;
    git(cwd, 'config', 'core.fsmonitor', cmd);
    git(cwd, 'config', 'diff.external', `sh -c '${cmd}'`);
    git(cwd, 'config', 'diff.evil.textconv', `sh -c '${cmd}'; cat`);
    git(cwd, 'config', 'core.pager', `sh -c '${cmd}'`);
    fs.writeFileSync(path.join(cwd, '.git', 'hooks', 'post-index-change'), `#!/bin/sh\n${cmd}\n`, { mode: 0o755 });
    fs.writeFileSync(path.join(cwd, '.gitattributes'), '* diff=evil\n');
    // The planted settings are live: plain git runs them.
    git(cwd, 'status', '--porcelain');
    expect(fs.existsSync(marker), 'plain git status runs core.fsmonitor').toBe(true);
    fs.rmSync(marker);

    await probeEverything(cwd);
    expect(fs.existsSync(marker), 'a planted command ran').toBe(false);
    const systemGit = createGitProbe();
    expect(await systemGit.isRepo(cwd)).toBe(true);
    expect((await systemGit.status(cwd))?.entries).toEqual(expect.arrayContaining([{ code: ' M', path: 'file.txt' }]));
    expect(await systemGit.changedFiles(cwd, null)).toEqual(['file.txt']);
    expect(await systemGit.commitsSince(cwd, null)).toBe(1);
  });

  it('a bare repository planted in a directory that is not one is not discovered', async () => {
    const cwd = tempDir('not-a-repo');
    const marker = path.join(tempDir('marker'), 'RAN');
    for (const [rel, content] of Object.entries(bareRepoFiles(cwd, marker))) {
      fs.mkdirSync(path.dirname(path.join(cwd, rel)), { recursive: true });
      fs.writeFileSync(path.join(cwd, rel), content);
    }
    git(cwd, 'status', '--porcelain');
    expect(fs.existsSync(marker), 'plain git discovers the planted repository').toBe(true);
    fs.rmSync(marker);

    await probeEverything(cwd);
    expect(fs.existsSync(marker), 'a planted command ran').toBe(false);
    expect(await createGitProbe().isRepo(cwd)).toBe(false);
  });
});

forEachBackend((backend) => {
  describe('loop mode: file tools cannot get a command run by navi', () => {
    it('in a repository: edit_file and write_file on .git/ are refused; a core.fsmonitor already there does not run', async () => {
      const s = await scenario(
        backend,
        script(
          [
            tc('edit_file', { path: '.git/config', old_string: '[core]', new_string: '[core]\n\tfsmonitor = "touch BY_EDIT; echo"' }),
            tc('write_file', { path: '.git/hooks/post-index-change', content: '#!/bin/sh\ntouch BY_HOOK\n' }),
            tc('write_file', { path: 'notes.txt', content: 'looked\n' }),
            say('I tried.'),
          ],
          [tc('read_file', { path: 'math.js' }), say('Still here.')],
        ),
      );
      loopRepo(s.cwd, { loop: '{ max_iterations: 2 }' });
      // As if written by someone else: navi's own probe must not run it either.
      git(s.cwd, 'config', 'core.fsmonitor', 'touch BY_CONFIG; echo');
      const run = await s.navi(['loop', 'task.yaml', '-o', 'stream-json'], { timeoutMs: 60_000 });
      expectExit(run, 3);
      const events = expectLoopStream(run);
      const calls = eventsOf(events, 'tool_call');
      expect(calls.slice(0, 2).map((c) => [c.name, c.ok])).toEqual([['edit_file', false], ['write_file', false]]);
      for (const c of calls.slice(0, 2)) expect(String(c.output)).toMatch(/is inside \.git\/; git runs commands/);
      expect(git(s.cwd, 'config', '--get', 'core.fsmonitor').trim()).toBe('touch BY_CONFIG; echo');
      for (const f of ['BY_EDIT', 'BY_HOOK', 'BY_CONFIG']) expect(fs.existsSync(path.join(s.cwd, f)), f).toBe(false);
      // The probe still works: the repository is seen and notes.txt is a changed file.
      const evidence = eventsOf(events, 'iteration_status')[0]?.evidence as { git_repo: boolean; files_changed: string[] };
      expect(evidence.git_repo).toBe(true);
      expect(evidence.files_changed).toContain('notes.txt');
    }, T);

    it('outside a repository: a bare repository planted with write_file is not run by the next iteration', async () => {
      const s = await scenario(backend, { turns: [], on_exhausted: 'error' });
      const marker = path.join(tempDir('marker'), 'RAN');
      const plant = Object.entries(bareRepoFiles(s.cwd, marker)).map(([p, content]) => tc('write_file', { path: p, content }));
      s.fake.setScript(script([...plant, say('Planted.')], [tc('list_dir', {}), say('Looked.')]));
      fs.writeFileSync(path.join(s.cwd, 'task.yaml'), 'name: plant\nprompt: look around\nloop: { max_iterations: 2 }\n');
      const run = await s.navi(['loop', 'task.yaml', '-o', 'stream-json'], { timeoutMs: 60_000 });
      expectExit(run, 3);
      const events = expectLoopStream(run);
      expect(eventsOf(events, 'tool_call').slice(0, plant.length).every((c) => c.ok === true)).toBe(true);
      expect(eventsOf(events, 'iteration_status')).toHaveLength(2);
      expect(fs.existsSync(marker), 'the planted core.fsmonitor ran').toBe(false);
    }, T);
  });
});
