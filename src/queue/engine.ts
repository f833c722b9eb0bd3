/**
 * The job queue's engine: pg-boss 10 (the last line that runs on Node 20) in navi's PostgreSQL
 * database, schema `pgboss`. Imported lazily by `navi queue`, `navi worker` and `navi db migrate`
 * on PostgreSQL only, never on `navi run`'s start-up path.
 *
 * Why pg-boss and how its lease is kept: see lease.ts.
 */
import type PgBoss from 'pg-boss';
import type { GitRetryPolicy } from './git-retry.js';
import { ensureScheduleTable } from './schedules.js';

/** The one queue every navi loop job goes through. */
export const QUEUE = 'navi-loop';
/** pg-boss's own default schema, named so the SQL in lease.ts and list.ts can say it. */
export const SCHEMA = 'pgboss';
/** Hand-backs (SIGTERM) and lease expiries count as retries: room for a long night of them. */
export const RETRY_LIMIT = 20;

/** How the queue's clocks are set; tests shorten them through the environment. */
export interface QueueTiming {
  /** A job not renewed for this long is taken by another worker. */
  leaseSeconds: number;
  /** How often a worker renews its jobs' leases (and sees a cancel). */
  renewMs: number;
  /** How often an idle worker asks for a job. */
  pollMs: number;
  /** How often pg-boss's maintenance (which hands expired leases back) runs, across all workers. */
  maintenanceSeconds: number;
  /** How often a worker looks for cron schedules that are due. */
  cronTickMs: number;
  /** How a failed clone or fetch of a job's repository is retried before the job fails (git-retry.ts). */
  gitRetry: GitRetryPolicy;
}

/** The most tries a clone or fetch gets: with pauses capped at a minute, under 20 minutes in all. */
const MAX_GIT_TRIES = 20;

function envNumber(env: Record<string, string | undefined>, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  return Number.isFinite(n) && n >= min ? n : fallback;
}

/**
 * The lease (NAVI_QUEUE_LEASE_S, default 5 minutes) is renewed four times per lease and at least
 * every 10 s, so a cancel is seen within seconds; maintenance runs twice per lease, at most once a minute.
 * A clone or fetch is tried NAVI_QUEUE_GIT_TRIES times (default 5), the pauses doubling from
 * NAVI_QUEUE_GIT_RETRY_MS (default 5 s) to at most a minute.
 */
export function queueTiming(env: Record<string, string | undefined>): QueueTiming {
  const leaseSeconds = Math.round(envNumber(env, 'NAVI_QUEUE_LEASE_S', 300, 2));
  return {
    leaseSeconds,
    renewMs: Math.min(10_000, Math.floor((leaseSeconds * 1000) / 4)),
    pollMs: envNumber(env, 'NAVI_QUEUE_POLL_MS', 2000, 50),
    maintenanceSeconds: Math.max(1, Math.min(60, Math.floor(leaseSeconds / 2))),
    cronTickMs: envNumber(env, 'NAVI_QUEUE_CRON_TICK_MS', 15_000, 50),
    // 5 tries, 5 s doubling to at most a minute: 75 s of a flaky network, not 20 retries in three minutes.
    gitRetry: {
      // Capped: however the variable is set, an unclonable repository fails within the hour.
      tries: Math.min(MAX_GIT_TRIES, Math.round(envNumber(env, 'NAVI_QUEUE_GIT_TRIES', 5, 1))),
      firstDelayMs: envNumber(env, 'NAVI_QUEUE_GIT_RETRY_MS', 5000, 10),
      maxDelayMs: 60_000,
    },
  };
}

export interface EngineOptions {
  url: string;
  timing: QueueTiming;
  /** Workers supervise (hand expired leases back); `queue add/list/cancel` do not. */
  supervise: boolean;
  /** Errors pg-boss reports from its background work (a lost connection). */
  onError?: (err: Error) => void;
}

/** Starts pg-boss (creating or migrating its schema), with navi's queue and schedule table in place. */
export async function openEngine(opts: EngineOptions): Promise<PgBoss> {
  const { default: PgBossClass } = await import('pg-boss');
  const boss = new PgBossClass({
    connectionString: opts.url,
    schema: SCHEMA,
    max: 4,
    supervise: opts.supervise,
    // Cron lives in navi's own schedule table (schedules.ts): pg-boss keys schedules by queue name.
    schedule: false,
    maintenanceIntervalSeconds: opts.timing.maintenanceSeconds,
    application_name: 'navi-queue',
  });
  boss.on('error', (err: Error) => opts.onError?.(err));
  await boss.start();
  if ((await boss.getQueue(QUEUE)) === null) {
    try {
      await boss.createQueue(QUEUE, { name: QUEUE, policy: 'standard', retryLimit: RETRY_LIMIT, retryDelay: 0 });
    } catch (err) {
      // Two processes creating it at once: the other one won.
      if ((await boss.getQueue(QUEUE)) === null) throw err;
    }
  }
  await ensureScheduleTable(boss.getDb());
  return boss;
}
