/**
 * One job on a worker: its worktree, its `navi loop` process (the built CLI, so the run is an
 * ordinary loop run with its own crash-safe resume), the lease renewed while it runs, and what
 * is recorded when it ends (job-outcome.ts).
 */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type PgBoss from 'pg-boss';
import { describeError, isNaviError } from '../errors.js';
import { isRecord } from '../util/guards.js';
import { QUEUE, type QueueTiming } from './engine.js';
import { loopArgv, type JobData } from './job-data.js';
import { jobVerdict, type StopCause } from './job-outcome.js';
import { claimJob, failForGood, handBack, moveRun, patchJobData, renewLease } from './lease.js';
import { addWorktree, attachBranch, removeWorktree, RepoUnavailableError, type Worktree } from './worktree.js';

/** What the worker says about its jobs (`navi worker` prints them). */
export interface WorkerEvent {
  event: 'job_started' | 'job_run' | 'job_completed' | 'job_failed' | 'job_handed_back' | 'job_released' | 'worker_error';
  job_id?: string;
  task?: string;
  run_id?: string;
  exit_code?: number | null;
  message?: string;
}

export interface JobContext {
  boss: PgBoss;
  worker: string;
  timing: QueueTiming;
  /** `node <naviBin> loop …`: the CLI this worker runs from. */
  naviBin: string;
  cacheDir: string;
  env: NodeJS.ProcessEnv;
  /**
   * What the operator's trust and sandbox floor add to `env` for this job's loop (undefined
   * removes a variable): the CLI decides them (cli/commands/worker.ts), the queue only applies them.
   */
  jobEnv?: (data: JobData) => Record<string, string | undefined>;
  /**
   * Checks a new job's task in its fresh worktree before the loop starts (a task whose `cwd`
   * leads out of the worktree); a throw fails the job for good with its message.
   */
  checkJob?: (data: JobData, worktree: string) => void;
  log: (e: WorkerEvent) => void;
  /** Aborted when the worker stops (SIGINT/SIGTERM): the loop stops at a safe point and is handed back. */
  stopping: AbortSignal;
}

/**
 * Reads the loop's stream-json: the run id (first event that has one), the final result's reason
 * and the last `error` event's message (why a job failed, for `navi queue list`).
 */
function watchOutput(child: ReturnType<typeof spawn>, logFile: string, onRunId: (id: string) => void): { reason: () => string | null; error: () => string | null } {
  let reason: string | null = null;
  let error: string | null = null;
  let runId: string | null = null;
  const log = createWriteStream(logFile, { flags: 'a' });
  child.stderr?.pipe(log, { end: false });
  if (child.stdout) {
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      log.write(`${line}\n`);
      let ev: unknown;
      try {
        ev = JSON.parse(line);
      } catch {
        return;
      }
      if (!isRecord(ev)) return;
      if (runId === null && typeof ev.run_id === 'string') {
        runId = ev.run_id;
        onRunId(runId);
      }
      if (ev.type === 'result' && typeof ev.reason === 'string') reason = ev.reason;
      if (ev.type === 'error' && typeof ev.message === 'string') error = ev.message.slice(0, 2000);
    });
    lines.on('close', () => log.end());
  }
  return { reason: () => reason, error: () => error };
}

/** The loop's environment: the worker's, with what the operator's trust and floor set for this job. */
function envOf(ctx: JobContext, data: JobData): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...ctx.env };
  for (const [name, value] of Object.entries(ctx.jobEnv?.(data) ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** Resolves after `ms`; rejects at once when the worker stops (the job is handed back, not failed). */
function pauseUnlessStopping(ms: number, stopping: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (stopping.aborted) return reject(new Error('the worker is stopping'));
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new Error('the worker is stopping'));
    };
    const timer = setTimeout(() => {
      stopping.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    stopping.addEventListener('abort', onAbort, { once: true });
  });
}

export async function runJob(ctx: JobContext, job: PgBoss.JobWithMetadata<JobData>): Promise<void> {
  const { boss, worker, timing } = ctx;
  const db = boss.getDb();
  if (!(await claimJob(db, job.id, worker, timing.leaseSeconds))) return;
  const data = job.data;
  let runId: string | null = typeof data.run_id === 'string' ? data.run_id : null;
  const resumed = runId !== null;
  ctx.log({ event: 'job_started', job_id: job.id, task: data.task, ...(runId !== null ? { run_id: runId } : {}) });
  let cause: StopCause = 'none';
  let child: ReturnType<typeof spawn> | null = null;
  const stop = (why: StopCause): void => {
    if (cause === 'none') cause = why;
    child?.kill('SIGTERM');
  };
  const renew = setInterval(() => {
    renewLease(db, job.id, worker, timing.leaseSeconds)
      .then((ours) => {
        if (!ours) stop('lease_lost');
      })
      .catch((err: unknown) => ctx.log({ event: 'worker_error', job_id: job.id, message: `lease renewal: ${describeError(err)}` }));
  }, timing.renewMs);
  const onStop = (): void => stop('shutdown');
  ctx.stopping.addEventListener('abort', onStop);
  let wt: Worktree;
  try {
    try {
      wt = await addWorktree({
        repo: data.repo,
        ...(data.branch !== undefined ? { branch: data.branch } : {}),
        runId,
        dir: path.join(ctx.cacheDir, 'worktrees', `${job.id}.${job.retryCount}`),
        cacheDir: ctx.cacheDir,
        retry: { policy: timing.gitRetry, wait: (ms) => pauseUnlessStopping(ms, ctx.stopping) },
      });
      if (runId !== null) await moveRun(db, runId, wt.path);
      else ctx.checkJob?.(data, wt.path);
      await patchJobData(db, job.id, worker, { worktree: wt.path });
    } catch (err) {
      if (ctx.stopping.aborted) {
        await handBack(boss, job.id, worker, { handed_back: true, ...(runId !== null ? { run_id: runId } : {}) });
        ctx.log({ event: 'job_handed_back', job_id: job.id });
        return;
      }
      const message = describeError(err);
      ctx.log({ event: 'job_failed', job_id: job.id, message });
      // A repository or branch that is not there stays so, and so does a clone that failed every
      // try (its retries are done, with backoff, in worktree.ts); git failing otherwise may pass.
      if (isNaviError(err) || err instanceof RepoUnavailableError) await failForGood(boss, job.id, worker, { error: message });
      else await handBack(boss, job.id, worker, { error: message }, 10);
      return;
    }
    if (ctx.stopping.aborted) {
      await handBack(boss, job.id, worker, { handed_back: true, ...(runId !== null ? { run_id: runId } : {}) });
      ctx.log({ event: 'job_handed_back', job_id: job.id });
      return;
    }
    const tree = wt;
    const logDir = path.join(ctx.cacheDir, 'logs');
    mkdirSync(logDir, { recursive: true });
    const proc = spawn(process.execPath, [ctx.naviBin, ...loopArgv(data, runId)], { cwd: tree.path, env: envOf(ctx, data), stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    const exited = new Promise<number | null>((resolve) => {
      proc.on('error', () => resolve(null));
      proc.on('exit', (code) => resolve(code));
    });
    const watched = watchOutput(proc, path.join(logDir, `${job.id}.log`), (id) => {
      if (resumed) return;
      runId = id;
      ctx.log({ event: 'job_run', job_id: job.id, run_id: id });
      void patchJobData(db, job.id, worker, { run_id: id }).catch(() => undefined);
      void attachBranch(tree.path, id).catch((err: unknown) => ctx.log({ event: 'worker_error', job_id: job.id, message: describeError(err) }));
    });
    const exitCode = await exited;
    const verdict = jobVerdict({ exitCode, cause, resultReason: watched.reason() });
    const error = watched.error();
    const output = { exit_code: exitCode, reason: watched.reason(), ...(error !== null ? { error } : {}), ...(runId !== null ? { run_id: runId } : {}) };
    const ids = { job_id: job.id, exit_code: exitCode, ...(runId !== null ? { run_id: runId } : {}) };
    if (verdict.kind === 'complete') {
      if (await renewLease(db, job.id, worker, timing.leaseSeconds)) await boss.complete(QUEUE, job.id, output);
      ctx.log({ event: 'job_completed', ...ids });
      await removeWorktree(tree);
    } else if (verdict.kind === 'fail') {
      await failForGood(boss, job.id, worker, output);
      const why = error ?? watched.reason();
      ctx.log({ event: 'job_failed', ...ids, ...(why !== null ? { message: why } : {}) });
    } else if (verdict.kind === 'hand_back') {
      await handBack(boss, job.id, worker, { ...output, handed_back: true }, verdict.delaySeconds);
      ctx.log({ event: 'job_handed_back', ...ids });
    } else {
      ctx.log({ event: 'job_released', ...ids, message: 'cancelled, or taken by another worker after its lease ran out' });
    }
  } finally {
    clearInterval(renew);
    ctx.stopping.removeEventListener('abort', onStop);
  }
}
