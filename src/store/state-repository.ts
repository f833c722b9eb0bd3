/**
 * Per-session tool state (todo list, scratchpad), one jsonb row per session, upserted whole.
 */
import { eq, sql } from 'drizzle-orm';
import { StorageError } from '../errors.js';
import type { ScratchpadEntry, SessionStateStore, TodoItem } from '../tools/types.js';
import type { NaviDatabase } from './database.js';
import { guardQuery } from './driver-errors.js';
import { scratchpad, todos } from './schema.js';

/**
 * The last list this store read or wrote, per session. A session's tool state is written by the
 * navi process running that session (its turn, its planner, its sub-agents' own sessions), so
 * this copy is current: a todo or scratchpad call reads it without a database round trip, and
 * without queueing behind the message writes still in flight on the same connection. Callers
 * get copies, never the cached objects; a failed write forgets the session.
 */
class LastKnown<T> {
  private readonly lists = new Map<string, T[]>();

  /** `inOrder` gives each item the key order a read from the database has. */
  constructor(private readonly inOrder: (item: T) => T) {}

  get(sessionId: string): T[] | undefined {
    const list = this.lists.get(sessionId);
    return list && structuredClone(list);
  }

  set(sessionId: string, list: T[]): void {
    this.lists.set(sessionId, structuredClone(list.map(this.inOrder)));
  }

  clear(): void {
    this.lists.clear();
  }

  /** Runs a write; remembers `list` if it lands, forgets the session if it fails. */
  async write(sessionId: string, list: T[], write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (err) {
      this.lists.delete(sessionId);
      throw err;
    }
    this.set(sessionId, list);
  }
}

/**
 * `SessionStateStore` over either driver; `forgetAll` drops the copies kept in memory (after
 * sessions are removed).
 */
export function createStateStore(db: NaviDatabase): SessionStateStore & { forgetAll(): void } {
  const missing = (sessionId: string) => (code: string | undefined) =>
    code === '23503' ? new StorageError('session_not_found', `Session ${sessionId} does not exist.`) : undefined;
  const knownTodos = new LastKnown(todoInOrder);
  const knownEntries = new LastKnown(entryInOrder);

  return {
    forgetAll(): void {
      knownTodos.clear();
      knownEntries.clear();
    },

    async getTodos(sessionId: string): Promise<TodoItem[]> {
      const known = knownTodos.get(sessionId);
      if (known) return known;
      const rows = await guardQuery('state.getTodos', () =>
        db.select({ items: todos.items }).from(todos).where(eq(todos.sessionId, sessionId)).limit(1),
      );
      knownTodos.set(sessionId, rows[0]?.items ?? []);
      return knownTodos.get(sessionId) ?? [];
    },

    async setTodos(sessionId: string, items: TodoItem[]): Promise<void> {
      const upsert = () =>
        db
          .insert(todos)
          .values({ sessionId, items })
          .onConflictDoUpdate({ target: todos.sessionId, set: { items, updatedAt: sql`now()` } });
      await knownTodos.write(sessionId, items, () => guardQuery('state.setTodos', upsert, missing(sessionId)));
    },

    async getScratchpad(sessionId: string): Promise<ScratchpadEntry[]> {
      const known = knownEntries.get(sessionId);
      if (known) return known;
      const rows = await guardQuery('state.getScratchpad', () =>
        db
          .select({ entries: scratchpad.entries })
          .from(scratchpad)
          .where(eq(scratchpad.sessionId, sessionId))
          .limit(1),
      );
      knownEntries.set(sessionId, rows[0]?.entries ?? []);
      return knownEntries.get(sessionId) ?? [];
    },

    async setScratchpad(sessionId: string, entries: ScratchpadEntry[]): Promise<void> {
      const upsert = () =>
        db
          .insert(scratchpad)
          .values({ sessionId, entries })
          .onConflictDoUpdate({ target: scratchpad.sessionId, set: { entries, updatedAt: sql`now()` } });
      await knownEntries.write(sessionId, entries, () => guardQuery('state.setScratchpad', upsert, missing(sessionId)));
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
