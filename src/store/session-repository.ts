/**
 * Sessions: one row per chat, sub-agent or loop session. Deleting one cascades (in the database)
 * to its messages, context, todos, scratchpad and child sessions.
 */
import { and, desc, eq, sql, type SQL } from 'drizzle-orm';
import { StorageError } from '../errors.js';
import type { NaviDatabase } from './database.js';
import { guardQuery } from './driver-errors.js';
import { pgText } from './encoding.js';
import { sessions } from './schema.js';
import type { NewSession, SessionKind, SessionRecord, SessionRepository } from './types.js';

/** Session repository over either driver. */
export function createSessionRepository(db: NaviDatabase): SessionRepository {
  // Runs after every model call: prepared once so PostgreSQL does not re-plan it each time.
  const addUsage = db
    .update(sessions)
    .set({
      promptTokens: sql`${sessions.promptTokens} + ${sql.placeholder('promptTokens')}`,
      completionTokens: sql`${sessions.completionTokens} + ${sql.placeholder('completionTokens')}`,
      updatedAt: sql`now()`,
    })
    .where(eq(sessions.id, sql.placeholder('id')))
    .prepare('navi_add_usage');

  return {
    async create(session: NewSession): Promise<void> {
      await guardQuery(
        'sessions.create',
        () =>
          db.insert(sessions).values({
            id: session.id,
            kind: session.kind,
            profile: session.profile,
            cwd: session.cwd,
            parentId: session.parentId ?? null,
            // The first words of a prompt, or a sub-agent's task the model wrote: may hold NUL.
            title: pgText(session.title),
            model: session.model,
          }),
        (code) => {
          if (code === '23505') return new StorageError('session_exists', `Session ${session.id} already exists.`);
          if (code === '23503') {
            return new StorageError('session_not_found', `Parent session ${session.parentId ?? ''} does not exist.`);
          }
          return undefined;
        },
      );
    },

    async get(id: string): Promise<SessionRecord | null> {
      const rows = await guardQuery('sessions.get', () =>
        db.select().from(sessions).where(eq(sessions.id, id)).limit(1),
      );
      const row = rows[0];
      return row ? toRecord(row) : null;
    },

    async list(opts: { limit?: number; kind?: SessionKind; cwd?: string } = {}): Promise<SessionRecord[]> {
      const filters: SQL[] = [];
      if (opts.kind) filters.push(eq(sessions.kind, opts.kind));
      if (opts.cwd !== undefined) filters.push(eq(sessions.cwd, opts.cwd));
      const query = db
        .select()
        .from(sessions)
        .where(and(...filters))
        // Most recently active first (appends and addUsage bump updated_at); id breaks ties.
        .orderBy(desc(sessions.updatedAt), desc(sessions.id))
        .$dynamic();
      const rows = await guardQuery('sessions.list', () =>
        opts.limit !== undefined ? query.limit(Math.max(0, Math.floor(opts.limit))) : query,
      );
      return rows.map(toRecord);
    },

    async remove(id: string): Promise<boolean> {
      const rows = await guardQuery('sessions.remove', () =>
        db.delete(sessions).where(eq(sessions.id, id)).returning({ id: sessions.id }),
      );
      return rows.length > 0;
    },

    async addUsage(id: string, promptTokens: number, completionTokens: number): Promise<void> {
      await guardQuery('sessions.addUsage', () =>
        addUsage.execute({ id, promptTokens: Math.trunc(promptTokens), completionTokens: Math.trunc(completionTokens) }),
      );
    },
  };
}

function toRecord(row: typeof sessions.$inferSelect): SessionRecord {
  return {
    id: row.id,
    kind: row.kind,
    profile: row.profile,
    cwd: row.cwd,
    parentId: row.parentId,
    title: row.title,
    model: row.model,
    promptTokens: row.promptTokens,
    completionTokens: row.completionTokens,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
