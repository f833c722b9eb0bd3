/**
 * What every repository suite file shares: how a backend hands its store over, and sessions
 * with unique ids (the database is shared by the tests of one file).
 */
import { randomUUID } from 'node:crypto';
import type { NewSession, Store } from '../../src/store/types.js';

/** How a backend file gives the suite its store. */
export interface SuiteBackend {
  store: () => Store;
  /** Closes the store and opens the same database again (a later process resuming). */
  reopen: () => Promise<Store>;
}

/** A session with a unique id. */
export function newSession(overrides: Partial<NewSession> = {}): NewSession {
  return {
    id: `s-${randomUUID()}`,
    kind: 'chat',
    profile: 'default',
    cwd: '/work/project',
    title: 'fix the failing test',
    model: 'qwen3:8b',
    ...overrides,
  };
}

/** A created session's id. */
export async function createSession(store: Store, overrides: Partial<NewSession> = {}): Promise<string> {
  const session = newSession(overrides);
  await store.sessions.create(session);
  return session.id;
}

/**
 * A value whose JSON text jsonb would change: keys out of order, a duplicate-looking nesting,
 * unicode, escapes, NUL and a lone surrogate (both escaped by JSON.stringify).
 */
export const AWKWARD_JSON = {
  zeta: 1,
  alpha: { z: [3, 2, 1], a: null, m: { y: true, b: 1.5 } },
  text: 'a\tb\n"quoted" \\ é 😀 bin\u0000ary \ud800',
  '10': 'numeric-looking key',
  empty: {},
  list: [],
} as const;
