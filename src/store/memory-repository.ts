/**
 * Long-term memory (SPEC §8, `remember` / `forget`): facts per user, kept when the session that
 * wrote them is deleted. One fact is stored once per user; remembering it again returns the
 * first record, so a model that repeats itself does not grow the memory message.
 */
import { and, asc, eq, sql } from 'drizzle-orm';
import type { NaviDatabase } from './database.js';
import { errorCode, guardQuery, missingSession, queryError } from './driver-errors.js';
import { nullableText, pgText } from './encoding.js';
import { newMemoryId } from './ids.js';
import { memories } from './schema.js';
import type { MemoryRecord, MemoryRepository, MemorySource } from './types.js';

/** New ids to try when a random id is taken (41 random bits: a second clash is not expected). */
const ID_ATTEMPTS = 3;

/** Memory repository over either driver. */
export function createMemoryRepository(db: NaviDatabase): MemoryRepository {
  // The memory message is rebuilt for every run (and sub-agent): prepared once, planned once.
  const listByUser = db
    .select()
    .from(memories)
    .where(eq(memories.userId, sql.placeholder('userId')))
    .orderBy(asc(memories.seq))
    .prepare('navi_list_memories');

  return {
    async add(userId: string, fact: string, source: MemorySource, sessionId?: string | null): Promise<MemoryRecord> {
      const values = {
        userId: pgText(userId),
        fact: pgText(fact),
        source,
        sessionId: nullableText(sessionId),
      };
      for (let attempt = 1; ; attempt++) {
        try {
          const [row] = await db
            .insert(memories)
            .values({ id: newMemoryId(), ...values })
            // A no-op update rather than DO NOTHING: it returns the existing row, even one a
            // concurrent transaction committed after this statement's snapshot was taken.
            .onConflictDoUpdate({
              target: [memories.userId, memories.factMd5],
              set: { userId: sql`${memories.userId}` },
            })
            .returning();
          if (!row) throw new Error('insert returned no row');
          return toRecord(row);
        } catch (err) {
          const code = errorCode(err);
          // The only other unique constraint is the primary key: a random id clashed.
          if (code === '23505' && attempt < ID_ATTEMPTS) continue;
          if (code === '23503') throw missingSession(sessionId ?? '');
          throw queryError('memories.add', err);
        }
      }
    },

    async list(userId: string): Promise<MemoryRecord[]> {
      const rows = await guardQuery('memories.list', () => listByUser.execute({ userId: pgText(userId) }));
      return rows.map(toRecord);
    },

    async remove(userId: string, id: string): Promise<boolean> {
      const rows = await guardQuery('memories.remove', () =>
        db
          .delete(memories)
          .where(and(eq(memories.userId, pgText(userId)), eq(memories.id, pgText(id))))
          .returning({ id: memories.id }),
      );
      return rows.length > 0;
    },
  };
}

function toRecord(row: typeof memories.$inferSelect): MemoryRecord {
  return {
    id: row.id,
    userId: row.userId,
    fact: row.fact,
    source: row.source,
    sessionId: row.sessionId,
    createdAt: row.createdAt,
  };
}
