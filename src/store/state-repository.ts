/**
 * Per-session tool state (todo list, scratchpad), one jsonb row per session, upserted whole.
 */
import { eq, sql } from 'drizzle-orm';
import { StorageError } from '../errors.js';
import type { ScratchpadEntry, SessionStateStore, TodoItem } from '../tools/types.js';
import type { NaviDatabase } from './database.js';
import { guardQuery } from './driver-errors.js';
import { scratchpad, todos } from './schema.js';

/** `SessionStateStore` over either driver. */
export function createStateStore(db: NaviDatabase): SessionStateStore {
  const missing = (sessionId: string) => (code: string | undefined) =>
    code === '23503' ? new StorageError('session_not_found', `Session ${sessionId} does not exist.`) : undefined;

  return {
    async getTodos(sessionId: string): Promise<TodoItem[]> {
      const rows = await guardQuery('state.getTodos', () =>
        db.select({ items: todos.items }).from(todos).where(eq(todos.sessionId, sessionId)).limit(1),
      );
      return (rows[0]?.items ?? []).map(todoInOrder);
    },

    async setTodos(sessionId: string, items: TodoItem[]): Promise<void> {
      await guardQuery(
        'state.setTodos',
        () =>
          db
            .insert(todos)
            .values({ sessionId, items })
            .onConflictDoUpdate({ target: todos.sessionId, set: { items, updatedAt: sql`now()` } }),
        missing(sessionId),
      );
    },

    async getScratchpad(sessionId: string): Promise<ScratchpadEntry[]> {
      const rows = await guardQuery('state.getScratchpad', () =>
        db
          .select({ entries: scratchpad.entries })
          .from(scratchpad)
          .where(eq(scratchpad.sessionId, sessionId))
          .limit(1),
      );
      return (rows[0]?.entries ?? []).map(entryInOrder);
    },

    async setScratchpad(sessionId: string, entries: ScratchpadEntry[]): Promise<void> {
      await guardQuery(
        'state.setScratchpad',
        () =>
          db
            .insert(scratchpad)
            .values({ sessionId, entries })
            .onConflictDoUpdate({ target: scratchpad.sessionId, set: { entries, updatedAt: sql`now()` } }),
        missing(sessionId),
      );
    },
  };
}

/**
 * jsonb returns object keys sorted by length; rebuild each item in declaration order so that
 * what tools print from it (and the model reads) does not depend on the storage format.
 */
function todoInOrder(item: TodoItem): TodoItem {
  const { id, text, status, validation, ...rest } = item;
  return { id, text, status, ...(validation !== undefined && { validation }), ...rest };
}

function entryInOrder(entry: ScratchpadEntry): ScratchpadEntry {
  const { key, kind, value, ...rest } = entry;
  return { key, kind, value, ...rest };
}
