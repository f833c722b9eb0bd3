/**
 * `navi worker`: takes jobs from the queue until stopped, up to `concurrency` at once, each in
 * job-runner.ts; ticks the cron schedules; on stop, every loop stops at a safe point and its job
 * is handed back before the engine closes.
 */
import { hostname } from 'node:os';
import type PgBoss from 'pg-boss';
import { describeError } from '../errors.js';
import { openEngine, QUEUE, type QueueTiming } from './engine.js';
import type { JobData } from './job-data.js';
import { runJob, type JobContext, type WorkerEvent } from './job-runner.js';
import { tickSchedules, type ScheduleRow } from './schedules.js';
import { sendOptions } from './send.js';

export interface WorkerOptions {
  url: string;
  concurrency: number;
  timing: QueueTiming;
  naviBin: string;
  cacheDir: string;
  env: NodeJS.ProcessEnv;
  /** Per job: what trust and the sandbox floor add to `env` (job-runner.ts). */
  jobEnv?: JobContext['jobEnv'];
  /** Per new job, in its worktree: a throw fails it (job-runner.ts). */
  checkJob?: JobContext['checkJob'];
  log: (e: WorkerEvent) => void;
  signal: AbortSignal;
  /** Called once the engine is open and the worker takes jobs. */
  onReady?: (name: string) => void;
}

/** Resolves after `ms`, or at once when `wake` is called or the signal aborts. */
function pause(ms: number, signal: AbortSignal): { done: Promise<void>; wake: () => void } {
  let wake = (): void => undefined;
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(finish, ms);
    function finish(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', finish);
      resolve();
    }
    signal.addEventListener('abort', finish);
    wake = finish;
  });
  return { done, wake };
}

export async function runWorker(opts: WorkerOptions): Promise<void> {
  const name = `${hostname()}:${process.pid}`;
  const boss = await openEngine({ url: opts.url, timing: opts.timing, supervise: true, onError: (err) => opts.log({ event: 'worker_error', message: describeError(err) }) });
  const active = new Map<string, Promise<void>>();
  let current: { done: Promise<void>; wake: () => void } | null = null;
  const ctx: JobContext = {
    boss,
    worker: name,
    timing: opts.timing,
    naviBin: opts.naviBin,
    cacheDir: opts.cacheDir,
    env: opts.env,
    ...(opts.jobEnv ? { jobEnv: opts.jobEnv } : {}),
    ...(opts.checkJob ? { checkJob: opts.checkJob } : {}),
    log: opts.log,
    stopping: opts.signal,
  };
  const send = (s: ScheduleRow): Promise<string | null> => boss.send(QUEUE, { ...s.data, schedule_id: s.id }, sendOptions(s.priority, opts.timing));
  const tick = (): void => {
    tickSchedules(boss.getDb(), new Date(), send).catch((err: unknown) => opts.log({ event: 'worker_error', message: `cron: ${describeError(err)}` }));
  };
  const cron = setInterval(tick, opts.timing.cronTickMs);
  tick();
  opts.onReady?.(name);
  try {
    while (!opts.signal.aborted) {
      const free = opts.concurrency - active.size;
      let jobs: PgBoss.JobWithMetadata<JobData>[] = [];
      if (free > 0) {
        try {
          jobs = await boss.fetch<JobData>(QUEUE, { batchSize: free, includeMetadata: true });
        } catch (err) {
          opts.log({ event: 'worker_error', message: describeError(err) });
        }
      }
      for (const job of jobs) {
        const p = runJob(ctx, job)
          .catch((err: unknown) => opts.log({ event: 'worker_error', job_id: job.id, message: describeError(err) }))
          .finally(() => {
            active.delete(job.id);
            current?.wake();
          });
        active.set(job.id, p);
      }
      // A batch that filled the free slots may be followed by more work at once.
      if (jobs.length > 0 && jobs.length === free) continue;
      current = pause(opts.timing.pollMs, opts.signal);
      await current.done;
    }
  } finally {
    clearInterval(cron);
    // Each running loop got the stop (job-runner's `stopping`): wait until they are saved and handed back.
    await Promise.allSettled(active.values());
    await boss.stop({ graceful: false, wait: true, close: true }).catch(() => undefined);
  }
}
