/**
 * Planning debug data (SPEC §8: "planning logs capped at 20"): what the `plan` tool asked and
 * got, per session, for `sessions show` and post-mortems. Appending trims the oldest entries in
 * the same transaction, so a session never holds more than the cap.
 */
import { and, asc, desc, eq, lt, sql } from 'drizzle-orm';
import type { NaviDatabase } from './database.js';
import { guardQuery, missingSession, sessionForeignKey } from './driver-errors.js';
import { decodeJson, encodeJson } from './encoding.js';
import { planningLogs, sessions } from './schema.js';
import type { PlanningLogRecord, PlanningLogRepository } from './types.js';

/** Entries kept per session (seed 000 keeps the 20 most recent). */
export const PLANNING_LOG_CAP = 20;

/** Planning-log repository over either driver. */
export function createPlanningLogRepository(db: NaviDatabase): PlanningLogRepository {
  return {
    async append(sessionId: string, data: unknown): Promise<PlanningLogRecord> {
      const text = encodeJson(data, 'the planning log entry');
      return guardQuery(
        'planningLogs.append',
        () =>
          db.transaction(async (tx) => {
            // Serialises appends to one session (two processes on PostgreSQL), so the trim below
            // sees every committed entry; NO KEY UPDATE does not block inserts that reference it.
            const locked = await tx
              .select({ id: sessions.id })
              .from(sessions)
              .where(eq(sessions.id, sessionId))
              .for('no key update');
            if (locked.length === 0) throw missingSession(sessionId);

            const [row] = await tx.insert(planningLogs).values({ sessionId, data: text }).returning();
            if (!row) throw new Error('insert returned no row');

            const oldestKept = tx
              .select({ id: planningLogs.id })
              .from(planningLogs)
              .where(eq(planningLogs.sessionId, sessionId))
              .orderBy(desc(planningLogs.id))
              .offset(PLANNING_LOG_CAP - 1)
              .limit(1);
            // Fewer than the cap: the subquery is NULL and nothing is deleted.
            await tx
              .delete(planningLogs)
              .where(and(eq(planningLogs.sessionId, sessionId), lt(planningLogs.id, sql`(${oldestKept})`)));
            return toRecord(row);
          }),
        sessionForeignKey(sessionId),
      );
    },

    async list(sessionId: string): Promise<PlanningLogRecord[]> {
      const rows = await guardQuery('planningLogs.list', () =>
        db.select().from(planningLogs).where(eq(planningLogs.sessionId, sessionId)).orderBy(asc(planningLogs.id)),
      );
      return rows.map(toRecord);
    },
  };
}

function toRecord(row: typeof planningLogs.$inferSelect): PlanningLogRecord {
  return { id: row.id, sessionId: row.sessionId, data: decodeJson(row.data), createdAt: row.createdAt };
}
