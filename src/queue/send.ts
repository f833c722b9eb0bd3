/** How navi sends a job to pg-boss (`navi queue add`, and each cron slot a worker sends). */
import type PgBoss from 'pg-boss';
import { RETRY_LIMIT, type QueueTiming } from './engine.js';

export function sendOptions(priority: number, timing: QueueTiming): PgBoss.SendOptions {
  return {
    priority,
    retryLimit: RETRY_LIMIT,
    retryDelay: 0,
    // The first lease; the worker that takes the job renews it (lease.ts).
    expireInSeconds: timing.leaseSeconds,
    // A job may wait in the queue for days (a fleet that is off over a weekend).
    retentionDays: 30,
  };
}
