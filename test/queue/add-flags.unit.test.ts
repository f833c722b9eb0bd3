/** `navi queue add`'s job data from its flags (no database): where the task and decisions files end up. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { jobDataOf, type QueueAddArgs } from '../../src/cli/commands/queue.js';
import { makeTempDir } from '../support/cli.js';
import { taskRepo } from './helpers.js';

const base: QueueAddArgs = { output: 'text', quiet: false, color: false };

describe('jobDataOf', () => {
  const repo = fs.realpathSync(taskRepo());
  const sub = path.join(repo, 'sub');
  fs.mkdirSync(sub);
  const outside = path.join(fs.realpathSync(makeTempDir('queue-outside')), 'elsewhere.yaml');
  fs.writeFileSync(outside, 'prompt: hi\n');
  fs.writeFileSync(path.join(repo, 'answers.jsonl'), '{"decision":"continue"}\n');

  it.each([
    ['a task file at the top', repo, 'task.yaml', 'task.yaml'],
    ['named from a subfolder: relative to the top', sub, '../task.yaml', 'task.yaml'],
    ['outside the repository: absolute', sub, outside, outside],
    ['free text: as typed', sub, 'make npm test pass', 'make npm test pass'],
    ['a task name: as typed', repo, 'fix-failing-tests', 'fix-failing-tests'],
  ])('%s', (_name, cwd, task, want) => {
    const data = jobDataOf({ ...base, task, repo: repo }, cwd);
    expect(data.task).toBe(want);
    expect(data.repo).toBe(repo);
  });

  it('the repository defaults to the one here; loop options pass on; decisions made absolute', () => {
    const data = jobDataOf({ ...base, task: 'task.yaml', maxIterations: 4, approval: 'strict', decisions: '../answers.jsonl', neverPause: true, model: 'm' }, sub);
    expect(data).toEqual({
      task: 'task.yaml',
      repo,
      loop: { model: 'm', max_iterations: 4, decisions: path.join(repo, 'answers.jsonl'), approval: 'strict', never_pause: true },
    });
  });

  it('a git URL is kept as given (each worker clones it)', () => {
    expect(jobDataOf({ ...base, task: 'tasks/x.yaml', repo: 'git@host:team/app.git', branch: 'main' }, sub)).toEqual({
      task: 'tasks/x.yaml',
      repo: 'git@host:team/app.git',
      branch: 'main',
      loop: {},
    });
  });
});
