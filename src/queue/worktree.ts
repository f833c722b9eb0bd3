/**
 * Each job's own git worktree (issue 21): two jobs on one repository never share a tree, and the
 * loop's commits land on the branch `navi/<run-id>`. A local repository gets `git worktree add`;
 * a git URL is cloned (bare) into the worker's cache once and fetched before each job.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { InvalidInputError } from '../errors.js';
import { isGitUrl } from './job-data.js';

const run = promisify(execFile);

async function git(cwd: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await run('git', ['-C', cwd, ...args], { maxBuffer: 16 * 1024 * 1024 });
    return stdout.trim();
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim();
    throw new Error(`git ${args.join(' ')} (in ${cwd}): ${stderr || (err instanceof Error ? err.message : String(err))}`, { cause: err });
  }
}

async function refExists(repo: string, ref: string): Promise<boolean> {
  try {
    await git(repo, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
    return true;
  } catch {
    return false;
  }
}

/** The branch a run's commits land on. */
export function runBranch(runId: string): string {
  return `navi/${runId}`;
}

/** One clone at a time per URL within a worker (two slots taking jobs of one repository). */
const cloning = new Map<string, Promise<string>>();

/** The repository a worktree is added to: the directory itself, or the cache's clone of the URL. */
async function sourceRepo(repo: string, cacheDir: string): Promise<string> {
  if (!isGitUrl(repo)) {
    if (!existsSync(repo)) throw new InvalidInputError('repo_not_found', `repository ${repo} does not exist on this worker`);
    return git(repo, ['rev-parse', '--show-toplevel']).catch(() => git(repo, ['rev-parse', '--git-dir']).then(() => repo));
  }
  const dir = path.join(cacheDir, 'repos', createHash('sha256').update(repo).digest('hex').slice(0, 16));
  const previous = cloning.get(repo) ?? Promise.resolve(dir);
  const next = previous.catch(() => dir).then(async () => {
    if (existsSync(path.join(dir, 'HEAD'))) {
      await git(dir, ['fetch', '--quiet', 'origin', '+refs/heads/*:refs/remotes/origin/*']);
    } else {
      mkdirSync(path.dirname(dir), { recursive: true });
      await run('git', ['clone', '--quiet', '--bare', repo, dir]);
    }
    return dir;
  });
  cloning.set(repo, next);
  return next;
}

/** The commit a new job starts from: `--branch B` (the remote's B for a URL), else HEAD. */
async function baseOf(source: string, url: boolean, branch: string | undefined): Promise<string> {
  if (branch === undefined) return 'HEAD';
  for (const ref of url ? [`refs/remotes/origin/${branch}`, `refs/heads/${branch}`, branch] : [branch]) {
    if (await refExists(source, ref)) return ref;
  }
  throw new InvalidInputError('branch_not_found', `branch ${branch} does not exist in ${source}`);
}

export interface Worktree {
  /** The repository the worktree belongs to (the local repo, or the cache's clone). */
  source: string;
  path: string;
}

/**
 * A fresh worktree for a job at `dir`: on the run's branch when the job is resumed (the branch a
 * worker before this one committed to; `--force`, as that worker's tree may still name it), else
 * detached at the job's base until the run id is known (`attachBranch`).
 */
export async function addWorktree(opts: { repo: string; branch?: string; runId: string | null; dir: string; cacheDir: string }): Promise<Worktree> {
  const url = isGitUrl(opts.repo);
  const source = await sourceRepo(opts.repo, opts.cacheDir);
  await git(source, ['worktree', 'prune']).catch(() => undefined);
  mkdirSync(path.dirname(opts.dir), { recursive: true });
  if (opts.runId !== null && (await refExists(source, `refs/heads/${runBranch(opts.runId)}`))) {
    await git(source, ['worktree', 'add', '--force', '--quiet', opts.dir, runBranch(opts.runId)]);
  } else {
    const base = await baseOf(source, url, opts.branch);
    await git(source, ['worktree', 'add', '--quiet', '--detach', opts.dir, base]);
    if (opts.runId !== null) await attachBranch(opts.dir, opts.runId);
  }
  return { source, path: opts.dir };
}

/** Puts the worktree on `navi/<run-id>` at its current commit (whatever the loop committed so far stays). */
export async function attachBranch(dir: string, runId: string): Promise<void> {
  await git(dir, ['checkout', '--quiet', '-B', runBranch(runId)]);
}

/** Removes a finished job's worktree; the branch and its commits stay in the repository. */
export async function removeWorktree(wt: Worktree): Promise<void> {
  await git(wt.source, ['worktree', 'remove', '--force', wt.path]).catch(() => undefined);
}
