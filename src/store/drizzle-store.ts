/**
 * Assembles a `Store` from a drizzle database; the driver-specific parts (connecting, locking,
 * closing) stay in `open.ts`.
 */
import { createArchiveRepository } from './archive-repository.js';
import type { NaviDatabase } from './database.js';
import { createLoopRunRepository } from './loop-run-repository.js';
import { createMemoryRepository } from './memory-repository.js';
import { createContextRepository, createMessageRepository } from './message-repository.js';
import { createPlanningLogRepository } from './planning-log-repository.js';
import { createSessionRepository } from './session-repository.js';
import { createStateStore } from './state-repository.js';
import type { Store } from './types.js';

/** Backend details the store reports and the shutdown it runs. */
export interface DrizzleStoreOptions {
  backend: Store['backend'];
  location: string;
  /** Ends the connection / closes PGlite and releases locks. Called at most once. */
  close: () => Promise<void>;
}

/** A `Store` whose repositories all run on `db`. */
export function createDrizzleStore(db: NaviDatabase, opts: DrizzleStoreOptions): Store {
  let closing: Promise<void> | null = null;
  const state = createStateStore(db);
  const sessions = createSessionRepository(db);
  return {
    backend: opts.backend,
    location: opts.location,
    sessions: {
      ...sessions,
      // Removing a session deletes its state and its children's: the copies kept in memory go too.
      async remove(id: string): Promise<boolean> {
        try {
          return await sessions.remove(id);
        } finally {
          state.forgetAll();
        }
      },
    },
    messages: createMessageRepository(db),
    context: createContextRepository(db),
    state,
    archives: createArchiveRepository(db),
    memories: createMemoryRepository(db),
    planningLogs: createPlanningLogRepository(db),
    loopRuns: createLoopRunRepository(db),
    close(): Promise<void> {
      // Idempotent, and a second caller waits for the first close to finish.
      closing ??= opts.close();
      return closing;
    },
  };
}
