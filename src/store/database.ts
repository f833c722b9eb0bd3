/**
 * The database handle the repositories take. Both `drizzle-orm/pglite` and
 * `drizzle-orm/postgres-js` databases are `PgDatabase`s; typing against the common base keeps
 * every query identical on both backends (SPEC §9).
 */
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';

/** A drizzle PostgreSQL database on either driver. */
export type NaviDatabase = PgDatabase<PgQueryResultHKT>;

/**
 * Rows of a `db.execute()` result: PGlite returns `{ rows }`, postgres.js the array itself.
 */
export function resultRows(result: unknown): Record<string, unknown>[] {
  if (Array.isArray(result)) return result as Record<string, unknown>[];
  if (typeof result === 'object' && result !== null && 'rows' in result && Array.isArray(result.rows)) {
    return result.rows as Record<string, unknown>[];
  }
  return [];
}
