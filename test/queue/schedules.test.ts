/**
 * Cron schedules enqueue on time (issue 21), the clock injected: `tickSchedules` against the
 * engine in a PostgreSQL database of this test's own. Two workers ticking at the same moment send
 * one job per slot. Skipped without DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type PgBoss from 'pg-boss';
import { openEngine, QUEUE, queueTiming } from '../../src/queue/engine.js';
import { listJobs } from '../../src/queue/list.js';
import { addSchedule, tickSchedules, type ScheduleRow } from '../../src/queue/schedules.js';
import { sendOptions } from '../../src/queue/send.js';
import { ADMIN_URL, freshDatabase } from './helpers.js';

describe.skipIf(ADMIN_URL === undefined)('cron schedules', () => {
  let boss: PgBoss;
  let drop: () => Promise<void>;
  const timing = queueTiming({});
  const send = (s: ScheduleRow): Promise<string | null> => boss.send(QUEUE, { ...s.data, schedule_id: s.id }, sendOptions(s.priority, timing));

  beforeAll(async () => {
    const db = await freshDatabase();
    drop = db.drop;
    boss = await openEngine({ url: db.url, timing, supervise: false });
  }, 120_000);
  afterAll(async () => {
    await boss?.stop({ graceful: false, wait: true, close: true });
    await drop?.();
  });

  it('sends a job at each slot, once, and nothing between slots', async () => {
    const t0 = new Date('2026-12-03T12:00:30Z');
    await addSchedule(boss.getDb(), { id: 'sched_nightly', cron: '0 2 * * *', data: { task: 'task.yaml', repo: '/srv/app', loop: {} }, priority: 3, now: t0 });
    const at = (iso: string): Promise<string[]> => tickSchedules(boss.getDb(), new Date(iso), send);
    expect(await at('2026-12-04T01:59:59Z')).toEqual([]);
    // Two workers tick at the slot: one job.
    const [one, two] = await Promise.all([at('2026-12-04T02:00:00Z'), at('2026-12-04T02:00:00Z')]);
    expect([...(one ?? []), ...(two ?? [])]).toHaveLength(1);
    expect(await at('2026-12-04T02:00:05Z')).toEqual([]);
    expect(await at('2026-12-04T12:00:00Z')).toEqual([]);
    // The next night, a tick late: the next job.
    expect(await at('2026-12-05T02:00:20Z')).toHaveLength(1);
    const jobs = await listJobs(boss.getDb(), 10);
    expect(jobs).toHaveLength(2);
    for (const j of jobs) {
      expect(j).toMatchObject({ status: 'queued', task: 'task.yaml', repo: '/srv/app', schedule_id: 'sched_nightly', priority: 3 });
    }
  });
});
