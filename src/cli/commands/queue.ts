/**
 * `navi queue add|list|cancel` (issue 21): loop runs as jobs on the PostgreSQL navi already uses
 * (engine and reasons: src/queue/). `add` is headless by construction: a job's loop has no
 * terminal, so approval prompts need a decisions file.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { InvalidInputError, NotFoundError, StorageError, describeError } from '../../errors.js';
import { loadTaskFile } from '../../loop/task-file.js';
import { checkCron } from '../../queue/cron.js';
import type PgBoss from 'pg-boss';
import type { QueueTiming } from '../../queue/engine.js';
import { isGitUrl, type JobData, type LoopOptions } from '../../queue/job-data.js';
import type { JobView } from '../../queue/list.js';
import { requirePostgres } from '../../queue/require-postgres.js';
import type { GlobalArgs } from '../global-args.js';
import type { CliHost } from '../host.js';
import { checkLoopOptions, loopRequestOf, type LoopFlagArgs } from '../loop-flags.js';
import { printJson, resolveCwd, setup } from '../setup.js';
import { findTaskFile } from '../task-lookup.js';
import { terminalSafe } from '../terminal-text.js';

/** `navi queue add`'s flags: a loop request's (loop-flags.ts, as `navi loop` reads them), and where and when the job runs. */
export interface QueueAddArgs extends LoopFlagArgs {
  task?: string;
  repo?: string;
  branch?: string;
  cron?: string;
  priority?: number;
}

type Args = GlobalArgs & Record<string, unknown>;
type Boss = PgBoss;

/** Opens the engine for a short command (no supervision), runs `fn`, closes it. */
async function withEngine<T>(argv: GlobalArgs, host: CliHost, command: string, fn: (boss: Boss, timing: QueueTiming) => Promise<T>): Promise<T> {
  const { config, host: { env } } = setup(argv, host);
  const url = requirePostgres(config.db.url, command);
  const { openEngine, queueTiming } = await import('../../queue/engine.js');
  const timing = queueTiming(env);
  let boss: Boss;
  try {
    boss = await openEngine({ url, timing, supervise: false });
  } catch (err) {
    throw new StorageError('queue_unavailable', `navi ${command}: cannot open the job queue in PostgreSQL: ${describeError(err)}`, { cause: err });
  }
  try {
    return await fn(boss, timing);
  } finally {
    await boss.stop({ graceful: false, wait: true, close: true }).catch(() => undefined);
  }
}

function repoOf(repo: string | undefined, cwd: string): string {
  if (repo !== undefined && isGitUrl(repo)) return repo;
  const dir = path.resolve(cwd, repo ?? '.');
  try {
    return execFileSync('git', ['-C', dir, 'rev-parse', '--show-toplevel'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    throw new InvalidInputError('repo_invalid', `--repo ${repo ?? dir}: not a git repository (a job runs in a git worktree of it); give a repository directory or a git URL`);
  }
}

/**
 * A task file named from a subfolder of a local repository (`navi queue add ../tasks/fix.yaml`)
 * is stored relative to the repository's top, where the worker's worktree starts.
 */
function taskInRepo(task: string, repo: string, cwd: string): string {
  if (isGitUrl(repo)) return task;
  const local = path.resolve(cwd, task);
  if (!existsSync(local) || !statSync(local).isFile()) return task;
  const rel = path.relative(realpathSync(repo), realpathSync(local));
  return rel.startsWith('..') || path.isAbsolute(rel) ? local : rel;
}

/** The job's data from the flags, checked before anything is sent (exit 2). */
export function jobDataOf(args: QueueAddArgs, cwd: string): JobData {
  // `--repo=-u…` would reach git clone as --upload-pack (issue 35): never an option.
  for (const [flag, v] of [['--repo', args.repo], ['--branch', args.branch]] as const) {
    if (v !== undefined && v.trimStart().startsWith('-')) {
      throw new InvalidInputError('flag_invalid', `${flag} '${terminalSafe(v)}' begins with "-": give a repository directory or git URL${flag === '--branch' ? ' (a branch or commit name)' : ''}, never a git option`);
    }
  }
  const task = (args.task ?? '').trim();
  if (task === '') throw new InvalidInputError('task_missing', 'navi queue add: give a task file (relative to the repository), a task name, or a prompt in quotes');
  const request = loopRequestOf(args);
  checkLoopOptions(request, 'flags');
  let decisions: string | undefined;
  if (request.decisions !== undefined) {
    if (request.decisions === '-') throw new InvalidInputError('flag_invalid', '--decisions -: a queued job has no stdin; give a decisions file the workers can read');
    decisions = path.resolve(cwd, request.decisions);
    if (!existsSync(decisions)) throw new InvalidInputError('file_not_found', `--decisions ${request.decisions}: no such file`);
  }
  if (request.approval !== undefined && request.approval !== 'none' && decisions === undefined) {
    throw new InvalidInputError('approval_needs_decider', `--approval ${request.approval}: a queued job runs headless and nobody can answer; pass --decisions FILE too, or use --approval none`);
  }
  // The workers' own config and flags decide notifications (a job's --notify is not a queue add flag).
  const { notify: _notify, never_pause: neverPause, ...rest } = request;
  const loop: LoopOptions = { ...rest, ...(neverPause === true ? { never_pause: true } : {}), ...(decisions !== undefined ? { decisions } : {}) };
  const repo = repoOf(args.repo, cwd);
  const stored = taskInRepo(task, repo, cwd);
  checkLocalTask(stored, repo);
  return { task: stored, repo, ...(args.branch !== undefined ? { branch: args.branch } : {}), loop };
}

/**
 * A task file of a local repository is validated now (exit 2, every problem named), as `navi
 * loop` would: a job that can only fail (a notify URL holding `${VAR}`, an unknown key) is never
 * queued. A task of a git URL is read by the worker from its clone.
 */
function checkLocalTask(task: string, repo: string): void {
  if (isGitUrl(repo)) return;
  const file = findTaskFile(task, repo);
  if (file !== null) loadTaskFile(file.path, file.display);
}

export async function queueAdd(argv: Args, host: CliHost): Promise<number> {
  const args = argv as QueueAddArgs;
  // Said before the flags are checked: without PostgreSQL nothing else matters.
  requirePostgres(setup(args, host).config.db.url, 'queue add');
  const cwd = resolveCwd(args.cwd, host.cwd);
  const data = jobDataOf(args, cwd);
  const cron = args.cron !== undefined ? checkCron(args.cron) : undefined;
  const priority = args.priority ?? 0;
  return withEngine(args, host, 'queue add', async (boss, timing) => {
    const { QUEUE } = await import('../../queue/engine.js');
    if (cron !== undefined) {
      const { addSchedule } = await import('../../queue/schedules.js');
      const { nextSlot } = await import('../../queue/cron.js');
      const id = `sched_${randomUUID().slice(0, 8)}`;
      const now = new Date();
      await addSchedule(boss.getDb(), { id, cron, data, priority, now });
      const next = nextSlot(cron, now).toISOString();
      if (args.output === 'text') host.stdout.write(`${id}\n`);
      else printJson(host.stdout, { id, kind: 'schedule', cron, next_at: next, task: data.task, repo: data.repo });
      if (args.output === 'text' && !args.quiet) host.stderr.write(`navi: schedule ${id} (${cron}, UTC): next job at ${next}; remove it with: navi queue cancel ${id}\n`);
      return 0;
    }
    const { sendOptions } = await import('../../queue/send.js');
    const id = await boss.send(QUEUE, data, sendOptions(priority, timing));
    if (id === null) throw new StorageError('queue_send_failed', 'navi queue add: the queue did not take the job');
    if (args.output === 'text') host.stdout.write(`${id}\n`);
    else printJson(host.stdout, { id, kind: 'job', status: 'queued', task: data.task, repo: data.repo, priority });
    return 0;
  });
}

function row(j: JobView): string {
  const run = j.run_id ?? '-';
  const why = j.status === 'failed' && j.error !== null ? `  ${terminalSafe(j.error.split('\n')[0] ?? '')}` : '';
  return `${j.id}  ${j.status.padEnd(9)}  ${String(j.attempts).padStart(2)}  ${(j.worker ?? '-').padEnd(20)}  ${run.padEnd(22)}  ${terminalSafe(j.task)}  ${terminalSafe(j.repo)}${why}`;
}

export async function queueList(argv: Args, host: CliHost): Promise<number> {
  const limit = typeof argv.limit === 'number' && argv.limit > 0 ? argv.limit : 20;
  return withEngine(argv, host, 'queue list', async (boss) => {
    const { listJobs, schedulesView } = await import('../../queue/list.js');
    const jobs = await listJobs(boss.getDb(), limit);
    const schedules = await schedulesView(boss.getDb(), new Date());
    if (argv.output !== 'text') {
      printJson(host.stdout, { jobs, schedules });
      return 0;
    }
    if (jobs.length === 0 && schedules.length === 0) {
      host.stdout.write('no jobs; add one with: navi queue add TASK --repo DIR\n');
      return 0;
    }
    for (const s of schedules) host.stdout.write(`${s.id}  cron "${s.cron}"  next ${s.next_at}  ${terminalSafe(s.task)}  ${terminalSafe(s.repo)}\n`);
    for (const j of jobs) host.stdout.write(`${row(j)}\n`);
    return 0;
  });
}

export async function queueCancel(argv: Args, host: CliHost): Promise<number> {
  const id = typeof argv.id === 'string' ? argv.id : '';
  return withEngine(argv, host, 'queue cancel', async (boss) => {
    const { cancel } = await import('../../queue/list.js');
    const result = await cancel(boss, id);
    if (result.kind === 'not_found') throw new NotFoundError('job_not_found', `no job or schedule '${terminalSafe(id)}'; see: navi queue list`);
    if (result.kind === 'finished') throw new InvalidInputError('job_finished', `job ${id} already ended ${result.status}; nothing to cancel`);
    const message =
      result.kind === 'schedule'
        ? `removed schedule ${id} (jobs it already sent stay queued)`
        : result.before === 'running'
          ? `cancelled job ${id}: its worker stops the loop at a safe point and saves it`
          : `cancelled job ${id}`;
    if (argv.output === 'text') host.stdout.write(`${message}\n`);
    else printJson(host.stdout, { id, cancelled: true, kind: result.kind, ...(result.kind === 'job' ? { was: result.before } : {}) });
    return 0;
  });
}
