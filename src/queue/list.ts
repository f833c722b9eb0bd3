/** `navi queue list` / `cancel`: the jobs as navi shows them, read from the engine's tables. */
import type PgBoss from 'pg-boss';
import { QUEUE, SCHEMA } from './engine.js';
import { jobStatus, type JobData, type JobStatus } from './job-data.js';
import { listSchedules, removeSchedule } from './schedules.js';
import { nextSlot } from './cron.js';

export interface JobView {
  id: string;
  task: string;
  repo: string;
  status: JobStatus;
  /** Times a worker took it (a hand-back or an expired lease makes another). */
  attempts: number;
  worker: string | null;
  run_id: string | null;
  priority: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  exit_code: number | null;
  /** Why it failed, when it did: git's reason for a repository it could not clone, the loop's error. */
  error: string | null;
  schedule_id: string | null;
}

export interface ScheduleView {
  id: string;
  cron: string;
  task: string;
  repo: string;
  priority: number;
  next_at: string;
  last_job_id: string | null;
}

function iso(v: unknown): string | null {
  return v === null || v === undefined ? null : new Date(v as string | Date).toISOString();
}

function viewOf(r: Record<string, unknown>): JobView {
  const data = (r.data ?? {}) as Partial<JobData>;
  const output = (r.output ?? {}) as Record<string, unknown>;
  const status = jobStatus(String(r.state));
  const started = r.started_on !== null && r.started_on !== undefined;
  return {
    id: String(r.id),
    task: String(data.task ?? ''),
    repo: String(data.repo ?? ''),
    status,
    attempts: started ? Number(r.retry_count) + 1 : Number(r.retry_count),
    worker: typeof data.worker === 'string' ? data.worker : null,
    run_id: typeof data.run_id === 'string' ? data.run_id : typeof output.run_id === 'string' ? output.run_id : null,
    priority: Number(r.priority),
    created_at: iso(r.created_on) ?? '',
    started_at: iso(r.started_on),
    finished_at: iso(r.completed_on),
    exit_code: typeof output.exit_code === 'number' ? output.exit_code : null,
    error: typeof output.error === 'string' ? output.error : null,
    schedule_id: typeof data.schedule_id === 'string' ? data.schedule_id : null,
  };
}

const COLUMNS = 'id, state, data, output, retry_count, priority, created_on, started_on, completed_on';

/** Newest first; the archive (jobs pg-boss moved there after they finished) included. */
export async function listJobs(db: PgBoss.Db, limit: number): Promise<JobView[]> {
  const { rows } = await db.executeSql(
    `SELECT * FROM (
       SELECT ${COLUMNS} FROM ${SCHEMA}.job WHERE name = $1
       UNION ALL
       SELECT ${COLUMNS} FROM ${SCHEMA}.archive WHERE name = $1
     ) j ORDER BY created_on DESC, id LIMIT $2`,
    [QUEUE, limit],
  );
  return rows.map(viewOf);
}

export async function getJob(db: PgBoss.Db, id: string): Promise<JobView | null> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return null;
  const { rows } = await db.executeSql(
    `SELECT ${COLUMNS} FROM ${SCHEMA}.job WHERE name = $1 AND id = $2::uuid
     UNION ALL SELECT ${COLUMNS} FROM ${SCHEMA}.archive WHERE name = $1 AND id = $2::uuid`,
    [QUEUE, id],
  );
  return rows.length === 0 ? null : viewOf(rows[0] as Record<string, unknown>);
}

export async function schedulesView(db: PgBoss.Db, now: Date): Promise<ScheduleView[]> {
  return (await listSchedules(db)).map((s) => ({
    id: s.id,
    cron: s.cron,
    task: s.data.task,
    repo: s.data.repo,
    priority: s.priority,
    next_at: nextSlot(s.cron, now).toISOString(),
    last_job_id: s.lastJobId,
  }));
}

export type CancelResult = { kind: 'job'; before: JobStatus } | { kind: 'schedule' } | { kind: 'not_found' } | { kind: 'finished'; status: JobStatus };

/**
 * Cancels a job (queued: never runs; running: its worker sees it at the next lease renewal and
 * stops the loop at a safe point, saved) or removes a schedule (its jobs already sent stay).
 */
export async function cancel(boss: PgBoss, id: string): Promise<CancelResult> {
  const db = boss.getDb();
  if (await removeSchedule(db, id)) return { kind: 'schedule' };
  const job = await getJob(db, id);
  if (job === null) return { kind: 'not_found' };
  if (job.status !== 'queued' && job.status !== 'running') return { kind: 'finished', status: job.status };
  await boss.cancel(QUEUE, id);
  return { kind: 'job', before: job.status };
}
