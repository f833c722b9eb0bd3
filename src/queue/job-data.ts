/**
 * What a queued job holds (pg-boss's `data`, JSON) and the `navi loop` command line a worker runs
 * for it. Pure: `navi queue add` builds the data, the worker turns it into arguments.
 */

/** The loop options `navi queue add` passes on, as `navi loop` takes them. */
export interface LoopOptions {
  model?: string;
  profile?: string;
  max_iterations?: number;
  max_tokens?: number;
  deadline?: string;
  iteration_timeout?: string;
  /** Absolute path of a decisions file (JSON lines) the workers can read. */
  decisions?: string;
  approval?: 'none' | 'strict' | 'periodic';
  never_pause?: boolean;
  strategy?: 'combine' | 'radical' | 'reread';
  /** `--sandbox` (src/sandbox/modes.ts): passed on every start, a resume included (it overrides the stored task's). */
  sandbox?: 'off' | 'workspace-write' | 'read-only';
}

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

const VALUE_FLAGS: ReadonlyArray<[keyof LoopOptions, string]> = [
  ['model', '--model'],
  ['profile', '--profile'],
  ['max_iterations', '--max-iterations'],
  ['max_tokens', '--max-tokens'],
  ['deadline', '--deadline'],
  ['iteration_timeout', '--iteration-timeout'],
  ['decisions', '--decisions'],
  ['approval', '--approval'],
  ['strategy', '--strategy'],
  ['sandbox', '--sandbox'],
];

/** Flags `navi loop --resume` refuses (the run keeps its settings); a deadline stays the run's first one. */
const NEW_RUN_ONLY = new Set<keyof LoopOptions>(['max_iterations', 'approval', 'never_pause', 'strategy', 'deadline']);

/**
 * The arguments after `navi` for this job: a new `loop TASK …` run, or `loop --resume RUN_ID …`
 * when a worker before this one started it. Always stream-json: the worker reads the run id from it.
 */
export function loopArgv(data: JobData, resumeRunId: string | null): string[] {
  const argv = resumeRunId === null ? ['loop', data.task] : ['loop', '--resume', resumeRunId];
  for (const [key, flag] of VALUE_FLAGS) {
    const value = data.loop[key];
    if (value === undefined || (resumeRunId !== null && NEW_RUN_ONLY.has(key))) continue;
    argv.push(flag, String(value));
  }
  if (data.loop.never_pause === true && resumeRunId === null) argv.push('--never-pause');
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
