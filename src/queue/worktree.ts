/**
 * Each job's own git worktree (issue 21): two jobs on one repository never share a tree, and the
 * loop's commits land on the branch `navi/<run-id>`. A local repository gets `git worktree add`;
 * a git URL is cloned (bare) into the worker's cache once and fetched before each job (retried
 * with a growing pause, git-retry.ts), and a job without `--branch` starts from the remote's
 * HEAD as that fetch found it.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { InvalidInputError, isNaviError } from '../errors.js';
import { withRetries, type GitRetryPolicy } from './git-retry.js';
import { isGitUrl } from './job-data.js';

const run = promisify(execFile);

/** No prompt for a user name or password (a worker has nobody to answer; git fails at once instead). */
const GIT_ENV = { ...process.env, GIT_TERMINAL_PROMPT: '0' };

/**
 * Before every git call of the worker: no hooks (a local repository's, or one a job's command
 * planted) and no fsmonitor command run in the worker's own git calls, and no `ext::` transport.
 */
const SAFE_GIT = ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', '-c', 'protocol.ext.allow=never'];

/** The first line(s) git wrote on stderr, else the error's own message. */
function gitReason(err: unknown): string {
  // One line (a job's error is shown as one): git's lines joined.
  const stderr = (err as { stderr?: string }).stderr
    ?.split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .join('; ');
  return stderr || (err instanceof Error ? err.message : String(err));
}

/**
 * `git -C cwd args…`. Every positional argument that comes from a job (a repository, a branch, a
 * path) follows `--` or `--end-of-options` in `args`, so none is ever read as an option.
 */
async function git(cwd: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await run('git', [...SAFE_GIT, '-C', cwd, ...args], { maxBuffer: 16 * 1024 * 1024, env: GIT_ENV });
    return stdout.trim();
  } catch (err) {
    throw new Error(`git ${args.join(' ')} (in ${cwd}): ${gitReason(err)}`, { cause: err });
  }
}

async function refExists(repo: string, ref: string): Promise<boolean> {
  try {
    await git(repo, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]);
    return true;
  } catch {
    return false;
  }
}

/** The branch a run's commits land on. */
export function runBranch(runId: string): string {
  return `navi/${runId}`;
}

/**
 * A repository or branch name that git would read as an option (`--upload-pack=…`). `navi queue
 * add` refuses them (exit 2); the worker checks again, as a job row may come from anywhere.
 */
export function optionLike(value: string): boolean {
  return value.trimStart().startsWith('-');
}

/** The clone or fetch of a job's repository failed every try: the job fails with git's reason. */
export class RepoUnavailableError extends Error {}

/** Where the remote's default branch (its HEAD when fetched) is kept in a cached clone. */
export const REMOTE_HEAD = 'refs/navi/origin-head';

/** One clone at a time per URL within a worker (two slots taking jobs of one repository). */
const cloning = new Map<string, Promise<string>>();

/** How sourceRepo retries a clone or fetch, and how it waits between tries. */
export interface FetchRetry {
  policy: GitRetryPolicy;
  /** Pauses between tries; throws when the worker stops meanwhile. */
  wait: (ms: number) => Promise<void>;
}

/**
 * Clones `url` bare into `dir` (through a temporary directory, so a clone cut short never looks
 * like a finished one), then fetches its branches, and its HEAD when the job needs the default
 * branch: the fetch is what makes a later job run what was pushed since.
 */
async function cloneOrFetch(url: string, dir: string, withHead: boolean): Promise<void> {
  if (!existsSync(path.join(dir, 'HEAD'))) {
    mkdirSync(path.dirname(dir), { recursive: true });
    const tmp = `${dir}.clone-${process.pid}-${Date.now()}`;
    try {
      await run('git', [...SAFE_GIT, 'clone', '--quiet', '--bare', '--', url, tmp], { env: GIT_ENV, maxBuffer: 16 * 1024 * 1024 });
    } catch (err) {
      rmSync(tmp, { recursive: true, force: true });
      throw new Error(`git clone ${url}: ${gitReason(err)}`, { cause: err });
    }
    try {
      renameSync(tmp, dir);
    } catch {
      // Another worker on this cache finished first: use its clone.
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  const refspecs = ['+refs/heads/*:refs/remotes/origin/*', ...(withHead ? [`+HEAD:${REMOTE_HEAD}`] : [])];
  await git(dir, ['fetch', '--quiet', '--', 'origin', ...refspecs]);
}

/** The repository a worktree is added to: the directory itself, or the cache's clone of the URL. */
async function sourceRepo(repo: string, cacheDir: string, withHead: boolean, retry: FetchRetry): Promise<string> {
  if (!isGitUrl(repo)) {
    if (!existsSync(repo)) throw new InvalidInputError('repo_not_found', `repository ${repo} does not exist on this worker`);
    return git(repo, ['rev-parse', '--show-toplevel']).catch(() => git(repo, ['rev-parse', '--git-dir']).then(() => repo));
  }
  const dir = path.join(cacheDir, 'repos', createHash('sha256').update(repo).digest('hex').slice(0, 16));
  const previous = cloning.get(repo) ?? Promise.resolve(dir);
  const next = previous.catch(() => dir).then(async () => {
    let tries = 0;
    try {
      await withRetries(
        retry.policy,
        () => {
          tries += 1;
          return cloneOrFetch(repo, dir, withHead);
        },
        retry.wait,
      );
    } catch (err) {
      if (isNaviError(err)) throw err;
      throw new RepoUnavailableError(`${tries} ${tries === 1 ? 'try' : 'tries'}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    return dir;
  });
  cloning.set(repo, next);
  return next;
}

/** The commit a new job starts from: `--branch B` (the remote's B for a URL), else the current HEAD (the remote's, for a URL). */
async function baseOf(source: string, url: boolean, branch: string | undefined): Promise<string> {
  if (branch === undefined) return url ? REMOTE_HEAD : 'HEAD';
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
export async function addWorktree(opts: { repo: string; branch?: string; runId: string | null; dir: string; cacheDir: string; retry: FetchRetry }): Promise<Worktree> {
  for (const [what, value] of [['repository', opts.repo], ['branch', opts.branch ?? '']] as const) {
    if (optionLike(value)) throw new InvalidInputError('flag_invalid', `the job's ${what} '${value}' begins with "-": git would read it as an option`);
  }
  const url = isGitUrl(opts.repo);
  const source = await sourceRepo(opts.repo, opts.cacheDir, opts.branch === undefined, opts.retry);
  await git(source, ['worktree', 'prune']).catch(() => undefined);
  mkdirSync(path.dirname(opts.dir), { recursive: true });
  if (opts.runId !== null && (await refExists(source, `refs/heads/${runBranch(opts.runId)}`))) {
    await git(source, ['worktree', 'add', '--force', '--quiet', '--', opts.dir, runBranch(opts.runId)]);
  } else {
    const base = await baseOf(source, url, opts.branch);
    await git(source, ['worktree', 'add', '--quiet', '--detach', '--', opts.dir, base]);
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
  await git(wt.source, ['worktree', 'remove', '--force', '--', wt.path]).catch(() => undefined);
}
