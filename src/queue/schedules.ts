/**
 * Cron schedules (`navi queue add --cron`): a table of navi's own beside pg-boss's schema, because
 * pg-boss 10 keys its schedules by queue name (one per queue) while navi sends every job to one
 * queue. Each worker ticks (engine.ts `cronTickMs`); a due slot is claimed with a conditional
 * UPDATE (two workers ticking at once: one wins) and then sent as an ordinary job.
 */
import type PgBoss from 'pg-boss';
import { dueSlot } from './cron.js';
import type { JobData } from './job-data.js';

type Db = PgBoss.Db;

export const SCHEDULES = 'navi_queue_schedules';

/** Created with the engine's schema (`navi db migrate`, or the first queue/worker command). */
export async function ensureScheduleTable(db: Db): Promise<void> {
  await db.executeSql(
    `CREATE TABLE IF NOT EXISTS ${SCHEDULES} (
       id text PRIMARY KEY,
       cron text NOT NULL,
       data jsonb NOT NULL,
       priority integer NOT NULL DEFAULT 0,
       last_slot timestamptz NOT NULL,
       last_job_id text,
       created_at timestamptz NOT NULL DEFAULT now()
     )`,
    [],
  );
}

export interface ScheduleRow {
  id: string;
  cron: string;
  data: JobData;
  priority: number;
  lastSlot: Date;
  lastJobId: string | null;
  createdAt: Date;
}

function rowOf(r: Record<string, unknown>): ScheduleRow {
  return {
    id: String(r.id),
    cron: String(r.cron),
    data: r.data as JobData,
    priority: Number(r.priority),
    lastSlot: new Date(r.last_slot as string | Date),
    lastJobId: typeof r.last_job_id === 'string' ? r.last_job_id : null,
    createdAt: new Date(r.created_at as string | Date),
  };
}

export async function addSchedule(db: Db, s: { id: string; cron: string; data: JobData; priority: number; now: Date }): Promise<void> {
  await db.executeSql(`INSERT INTO ${SCHEDULES} (id, cron, data, priority, last_slot) VALUES ($1, $2, $3::jsonb, $4, $5)`, [
    s.id,
    s.cron,
    JSON.stringify(s.data),
    s.priority,
    s.now.toISOString(),
  ]);
}

export async function listSchedules(db: Db): Promise<ScheduleRow[]> {
  const { rows } = await db.executeSql(`SELECT * FROM ${SCHEDULES} ORDER BY created_at, id`, []);
  return rows.map(rowOf);
}

export async function removeSchedule(db: Db, id: string): Promise<boolean> {
  const { rows } = await db.executeSql(`DELETE FROM ${SCHEDULES} WHERE id = $1 RETURNING id`, [id]);
  return rows.length > 0;
}

/**
 * Sends a job for every schedule due at `now`; returns the ids of the jobs sent. `send` is the
 * engine's send (a parameter, so the tick is tested with its clock and without a worker).
 */
export async function tickSchedules(db: Db, now: Date, send: (s: ScheduleRow) => Promise<string | null>): Promise<string[]> {
  const sent: string[] = [];
  for (const s of await listSchedules(db)) {
    const slot = dueSlot(s.cron, s.lastSlot, now);
    if (slot === null) continue;
    // Claim the slot: only the worker whose UPDATE sees the old last_slot sends the job.
    const { rows } = await db.executeSql(`UPDATE ${SCHEDULES} SET last_slot = $2 WHERE id = $1 AND last_slot = $3 RETURNING id`, [
      s.id,
      slot.toISOString(),
      s.lastSlot.toISOString(),
    ]);
    if (rows.length === 0) continue;
    const id = await send(s);
    if (id !== null) {
      await db.executeSql(`UPDATE ${SCHEDULES} SET last_job_id = $2 WHERE id = $1`, [s.id, id]);
      sent.push(id);
    }
  }
  return sent;
}
