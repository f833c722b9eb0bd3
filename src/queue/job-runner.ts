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
import { addWorktree, attachBranch, removeWorktree, type Worktree } from './worktree.js';

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
  log: (e: WorkerEvent) => void;
  /** Aborted when the worker stops (SIGINT/SIGTERM): the loop stops at a safe point and is handed back. */
  stopping: AbortSignal;
}

/** Reads the loop's stream-json: the run id (first event that has one) and the final result's reason. */
function watchOutput(child: ReturnType<typeof spawn>, logFile: string, onRunId: (id: string) => void): { reason: () => string | null } {
  let reason: string | null = null;
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
    });
    lines.on('close', () => log.end());
  }
  return { reason: () => reason };
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
      });
      if (runId !== null) await moveRun(db, runId, wt.path);
      await patchJobData(db, job.id, worker, { worktree: wt.path });
    } catch (err) {
      const message = describeError(err);
      ctx.log({ event: 'job_failed', job_id: job.id, message });
      // A repository or branch that is not there stays so; git failing otherwise may pass.
      if (isNaviError(err)) await failForGood(boss, job.id, worker, { error: message });
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
    const proc = spawn(process.execPath, [ctx.naviBin, ...loopArgv(data, runId)], { cwd: tree.path, env: ctx.env, stdio: ['ignore', 'pipe', 'pipe'] });
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
    const output = { exit_code: exitCode, reason: watched.reason(), ...(runId !== null ? { run_id: runId } : {}) };
    const ids = { job_id: job.id, exit_code: exitCode, ...(runId !== null ? { run_id: runId } : {}) };
    if (verdict.kind === 'complete') {
      if (await renewLease(db, job.id, worker, timing.leaseSeconds)) await boss.complete(QUEUE, job.id, output);
      ctx.log({ event: 'job_completed', ...ids });
      await removeWorktree(tree);
    } else if (verdict.kind === 'fail') {
      await failForGood(boss, job.id, worker, output);
      ctx.log({ event: 'job_failed', ...ids, ...(watched.reason() !== null ? { message: watched.reason() ?? '' } : {}) });
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
