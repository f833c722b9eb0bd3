/**
 * Applies the SQL migrations in `drizzle/` (at the package root) with drizzle's own migrators.
 * Loaded lazily by `open.ts`.
 */
import { sql } from 'drizzle-orm';
import { readMigrationFiles, type MigrationConfig } from 'drizzle-orm/migrator';
import type { PgliteDatabase } from 'drizzle-orm/pglite';
import type { PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import type { Sql } from 'postgres';
import { StorageError } from '../errors.js';
import { packagePath } from '../package-root.js';
import { resultRows, type NaviDatabase } from './database.js';
import { errorCode } from './driver-errors.js';

/** Absolute path of the shipped migrations (`<package>/drizzle`). */
export const MIGRATIONS_FOLDER = packagePath('drizzle');

/**
 * Our own bookkeeping table: a database shared with another drizzle app must not mistake that
 * app's `__drizzle_migrations` rows for ours.
 */
export const MIGRATION_CONFIG: Readonly<MigrationConfig> = {
  migrationsFolder: MIGRATIONS_FOLDER,
  migrationsSchema: 'drizzle',
  migrationsTable: '__navi_migrations',
};

/** Advisory-lock key serialising migrations of one PostgreSQL database ("navi" in ASCII). */
const MIGRATION_LOCK_KEY = 0x6e617669;
/** How long a second process waits for another one's migration before giving up. */
const MIGRATION_LOCK_WAIT_MS = 60_000;
const MIGRATION_LOCK_POLL_MS = 100;

/** What a migration pass did. */
export interface MigrationOutcome {
  /** Migrations applied by this call (0 when the database was up to date). */
  applied: number;
  /** Migrations shipped with this navi. */
  total: number;
}

/** Migrates an embedded database. The directory lock already keeps other processes out. */
export async function migratePglite(db: PgliteDatabase): Promise<MigrationOutcome> {
  const { migrate } = await import('drizzle-orm/pglite/migrator');
  return migrateWith(db, () => migrate(db, MIGRATION_CONFIG));
}

/**
 * Migrates a server database. Two navi processes starting at once would both create the
 * bookkeeping schema and apply the same migration; a session advisory lock serialises them.
 * `client` must be the single-connection client behind `db`, so that the lock, the migration and
 * the unlock all run on one session.
 */
export async function migratePostgres(db: PostgresJsDatabase, client: Sql): Promise<MigrationOutcome> {
  const { migrate } = await import('drizzle-orm/postgres-js/migrator');
  return migrateWith(db, async () => {
    await takeAdvisoryLock(client);
    try {
      await migrate(db, MIGRATION_CONFIG);
    } finally {
      await client`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`;
    }
  });
}

/** Shipped migrations the database lacks, without applying any (a client of another process's database). */
export async function pendingMigrations(db: NaviDatabase): Promise<{ pending: number; total: number }> {
  const shipped = readMigrationFiles(MIGRATION_CONFIG).map((m) => m.folderMillis);
  return { pending: await countPending(db, shipped), total: shipped.length };
}

async function migrateWith(db: NaviDatabase, run: () => Promise<void>): Promise<MigrationOutcome> {
  const migrations = readMigrationFiles(MIGRATION_CONFIG);
  const pending = await countPending(db, migrations.map((m) => m.folderMillis));
  // The common case (already migrated) costs one query and takes no lock.
  if (pending === 0) return { applied: 0, total: migrations.length };
  await run();
  return { applied: pending, total: migrations.length };
}

/** Shipped migrations newer than the last one applied to `db` (drizzle compares timestamps). */
async function countPending(db: NaviDatabase, shipped: number[]): Promise<number> {
  const table = sql`${sql.identifier(MIGRATION_CONFIG.migrationsSchema ?? 'drizzle')}.${sql.identifier(
    MIGRATION_CONFIG.migrationsTable ?? '__drizzle_migrations',
  )}`;
  let last: number | null;
  try {
    const rows = resultRows(await db.execute(sql`select max(created_at) as last from ${table}`));
    const value = rows[0]?.last;
    last = value === null || value === undefined ? null : Number(value);
  } catch (err) {
    // undefined_table / invalid_schema_name: a database navi has never migrated.
    const code = errorCode(err);
    if (code === '42P01' || code === '3F000') return shipped.length;
    throw err;
  }
  return shipped.filter((millis) => last === null || millis > last).length;
}

async function takeAdvisoryLock(client: Sql): Promise<void> {
  const deadline = Date.now() + MIGRATION_LOCK_WAIT_MS;
  for (;;) {
    const [row] = await client<{ locked: boolean }[]>`select pg_try_advisory_lock(${MIGRATION_LOCK_KEY}) as locked`;
    if (row?.locked === true) return;
    if (Date.now() > deadline) {
      throw new StorageError(
        'store_migration_busy',
        `Another process has been migrating this database for over ${MIGRATION_LOCK_WAIT_MS / 1000} s; try again when it finishes.`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, MIGRATION_LOCK_POLL_MS));
  }
}
