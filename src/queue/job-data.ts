/**
 * What a queued job holds (pg-boss's `data`, JSON) and the `navi loop` command line a worker runs
 * for it. Pure: `navi queue add` builds the data, the worker turns it into arguments.
 */
import { LOOP_OPTION_KEYS, NEW_RUN_ONLY, type LoopOptions } from '../loop/loop-request.js';

/** The loop options a job carries: the loop request of `navi loop` and POST /runs (src/loop/loop-request.ts), its task aside. */
export type { LoopOptions };

export interface JobData {
  /** A task file (relative to the repository, or absolute), a task name, or free text. */
  task: string;
  /** A local directory (absolute) or a git URL. */
  repo: string;
  /** The commit-ish the job's worktree starts from (default: the repository's HEAD). */
  branch?: string;
  loop: LoopOptions;
  /** Set by the worker that took it (lease.ts). */
  worker?: string;
  /** The loop run, once started: the next worker resumes it. */
  run_id?: string;
  /** Which schedule sent it. */
  schedule_id?: string;
}

/** Options a resume leaves out: the loop settings the run keeps, and its deadline (it stays the run's first one). */
const NOT_ON_RESUME = new Set<keyof LoopOptions>([...NEW_RUN_ONLY, 'deadline']);

/** `max_iterations` → `--max-iterations`: `navi loop`'s flag of each request field (snake_case data, kebab-case flags). */
function flagOf(key: keyof LoopOptions): string {
  return `--${key.replace(/_/g, '-')}`;
}

/**
 * The arguments after `navi` for this job: a new `loop TASK …` run, or `loop --resume RUN_ID …`
 * when a worker before this one started it — the request turned back into the command line
 * `navi loop` reads it from (`loopRequestOf`), so a job's loop is set up as any other. Always
 * stream-json: the worker reads the run id from it.
 */
export function loopArgv(data: JobData, resumeRunId: string | null): string[] {
  const argv = resumeRunId === null ? ['loop', data.task] : ['loop', '--resume', resumeRunId];
  for (const key of LOOP_OPTION_KEYS) {
    const value = data.loop[key];
    if (value === undefined || (resumeRunId !== null && NOT_ON_RESUME.has(key))) continue;
    if (typeof value === 'boolean') argv.push(value ? flagOf(key) : `--no-${flagOf(key).slice(2)}`);
    else if (Array.isArray(value)) for (const v of value) argv.push(flagOf(key), v);
    else argv.push(flagOf(key), String(value));
  }
  argv.push('-o', 'stream-json');
  return argv;
}

/** The job's status as `navi queue list` says it, from pg-boss's state. */
export type JobStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

const STATES: Readonly<Record<string, JobStatus>> = {
  created: 'queued',
  retry: 'queued',
  active: 'running',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
};

export function jobStatus(state: string): JobStatus {
  return STATES[state] ?? 'failed';
}

/** `user@host:path` (scp-like) or a URL with a scheme: cloned into the worker's cache. */
export function isGitUrl(repo: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(repo) || /^[\w.-]+@[\w.-]+:/.test(repo);
}
