/**
 * Opening the store: PostgreSQL through postgres.js when a URL is given, else embedded PGlite in
 * a locked data directory. Migrations are applied on open. The drivers, drizzle and the
 * repositories are imported only inside `openStore`, so importing this module costs next to
 * nothing (commands that need no database never pay for it).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PGlite } from '@electric-sql/pglite';
import type * as PgliteModule from '@electric-sql/pglite';
import { importModule } from '../dynamic-import.js';
import { InvalidInputError, NaviError, StorageError, describeError } from '../errors.js';
import { errnoCode } from '../util/guards.js';
import { isPostgresUrl, redactUrl } from './database-url.js';
import { acquireDirLock, lockInFlux, startLockHeartbeat, type DirLock } from './lock.js';
import { unpackTemplate, VERSION_FILE } from './pgdata-template.js';
import { advertise, holderSocket, schemaMismatch, socketPathFor, withdraw, type Endpoint } from './shared-pglite.js';
import type * as PgliteWorkerModule from './pglite-worker.js';
import type { PgliteInWorker } from './pglite-worker.js';
import type { MigrationReport, OpenStoreOptions, Store } from './types.js';

/** Seconds to wait for a PostgreSQL server that does not answer (postgres.js defaults to 30). */
const DEFAULT_CONNECT_TIMEOUT_S = 10;
/** Seconds `close()` lets in-flight queries finish before dropping the connection. */
const CLOSE_TIMEOUT_S = 2;

/**
 * Where the embedded database lives: `$NAVI_DATA_DIR`, else `$XDG_DATA_HOME/navi/pgdata`, else
 * `~/.local/share/navi/pgdata`.
 */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.NAVI_DATA_DIR) return path.resolve(env.NAVI_DATA_DIR);
  // The XDG spec says relative values are invalid and must be ignored.
  const xdg = env.XDG_DATA_HOME;
  const dataHome = xdg && path.isAbsolute(xdg) ? xdg : path.join(env.HOME || os.homedir(), '.local', 'share');
  return path.join(dataHome, 'navi', 'pgdata');
}

/**
 * Opens (and migrates) the store. Throws `StorageError` (`store_locked`, `store_unreachable`,
 * `store_auth_failed`, `store_database_missing`, `store_dir_not_writable`, `store_open_failed`)
 * or `InvalidInputError` (`db_url_invalid`) with a one-line message.
 */
export async function openStore(opts: OpenStoreOptions): Promise<Store> {
  return (await openAndMigrate(opts)).store;
}

/** `navi db migrate`: opens the database, applies pending migrations and reports, then closes. */
export async function migrateDatabase(opts: OpenStoreOptions): Promise<MigrationReport> {
  const { store, applied, total } = await openAndMigrate(opts);
  await store.close();
  return { backend: store.backend, location: store.location, applied, total };
}

interface Opened {
  store: Store;
  applied: number;
  total: number;
}

function openAndMigrate(opts: OpenStoreOptions): Promise<Opened> {
  return opts.url ? openPostgres(opts.url, opts.connectTimeoutS ?? DEFAULT_CONNECT_TIMEOUT_S) : openPglite(opts);
}

/** The PGlite worker module, once `prewarmEmbeddedStore` started a worker on a guess. */
let earlyPglite: Promise<typeof PgliteWorkerModule> | null = null;

/**
 * For a command that will probably open the embedded database (no `--db`, no DATABASE_URL):
 * starts its worker now, so that loading PGlite overlaps start-up (`prewarmPglite`). A store
 * that turns out to be PostgreSQL stops it again.
 */
export function prewarmEmbeddedStore(): void {
  earlyPglite ??= import('./pglite-worker.js').then((m) => {
    m.prewarmPglite();
    return m;
  });
  earlyPglite.catch(() => undefined);
}

async function openPostgres(url: string, connectTimeoutS: number): Promise<Opened> {
  // A database worker started on a guess (the URL came from a config file) is not needed.
  // So is one main.cjs started before the CLI loaded (`EARLY_PGLITE_KEY` in pglite-worker.ts).
  if (earlyPglite === null && '__naviEarlyPglite' in globalThis) prewarmEmbeddedStore();
  void earlyPglite?.then((m) => m.discardPglitePrewarm());
  const location = redactUrl(url);
  if (!isPostgresUrl(url)) {
    throw new InvalidInputError(
      'db_url_invalid',
      `Database URL ${location} is not a PostgreSQL URL; expected postgres://user:password@host:5432/database.`,
    );
  }
  const [{ default: postgres }, { drizzle }, { migratePostgres }, { postgresOpenError }, { createDrizzleStore }] =
    await Promise.all([
      import('postgres'),
      import('drizzle-orm/postgres-js'),
      import('./migrate.js'),
      import('./driver-errors.js'),
      import('./drizzle-store.js'),
    ]);

  let client: ReturnType<typeof postgres>;
  try {
    client = postgres(url, {
      // One connection: the CLI issues one query at a time, the migration advisory lock needs
      // lock, migrate and unlock on one session, and it matches PGlite's single connection.
      max: 1,
      // Server notices ("schema already exists, skipping") must never reach stdout.
      onnotice: () => {},
      connect_timeout: connectTimeoutS,
      // navi uses no custom array types; skipping the lookup saves a round trip on connect.
      fetch_types: false,
      connection: { application_name: 'navi' },
    });
  } catch (err) {
    throw new InvalidInputError('db_url_invalid', `Database URL ${location} is not valid: ${describeError(err)}.`);
  }

  const db = drizzle({ client });
  try {
    const { applied, total } = await migratePostgres(db, client);
    const store = createDrizzleStore(db, {
      backend: 'postgres',
      location,
      close: () => client.end({ timeout: CLOSE_TIMEOUT_S }),
    });
    return { store, applied, total };
  } catch (err) {
    await client.end({ timeout: 0 }).catch(() => undefined);
    throw postgresOpenError(url, err, connectTimeoutS);
  }
}

/** How long a guest waits for a holder that is still opening (or migrating) the database to serve it. */
const HOLDER_WAIT_MS = 60_000;
/** How often it looks for the holder's socket meanwhile (a stat and a read). */
const HOLDER_POLL_MS = 50;

async function openPglite(opts: OpenStoreOptions): Promise<Opened> {
  // An empty path would resolve to the working directory and fill it with PostgreSQL files.
  if (opts.dataDir.trim() === '') {
    throw new InvalidInputError('data_dir_invalid', 'the PGlite data directory is empty; set NAVI_DATA_DIR or db.data_dir to a directory path');
  }
  const dataDir = path.resolve(opts.dataDir);
  prepareDataDir(dataDir);
  const opened = await openPgliteDir(dataDir, opts);
  if (!opened.guest) return opened;
  // A guest outlives its holder: when the holder leaves, it takes the directory over or
  // reconnects to whoever holds it now (src/store/guest-store.ts).
  const { createGuestStore } = await import('./guest-store.js');
  const store = createGuestStore(opened.store, async () => (await openPgliteDir(dataDir, { ...opts, notice: undefined })).store);
  return { ...opened, store };
}

/**
 * Holds the directory (lock, PGlite, migrations, serving it) or, when a live navi process holds
 * it, connects through that process. A holder still opening the database (its lock is fresh, no
 * socket yet: two navis started together) is waited for, up to HOLDER_WAIT_MS; one that does not
 * serve the directory is `store_locked`.
 */
async function openPgliteDir(dataDir: string, opts: OpenStoreOptions): Promise<Opened & { guest: boolean }> {
  const deadline = Date.now() + HOLDER_WAIT_MS;
  let told = false;
  for (;;) {
    let lock: DirLock;
    try {
      lock = acquireDirLock(dataDir);
    } catch (err) {
      if (!(err instanceof StorageError && err.code === 'store_locked')) throw err instanceof NaviError ? err : notWritable(dataDir, err);
      const holder = holderSocket(dataDir);
      if (holder !== null) {
        const guest = await openThroughHolder(dataDir, holder);
        if (guest !== null) return { ...guest, guest: true };
        // The holder left meanwhile: take the directory over, or find who holds it now.
      } else if (!lockInFlux(dataDir)) {
        throw err;
      } else if (!told) {
        told = true;
        opts.notice?.(`another navi process is opening the database in ${dataDir}; waiting for it`);
      }
      if (Date.now() > deadline) throw err;
      await sleep(HOLDER_POLL_MS);
      continue;
    }
    return { ...(await openAsHolder(dataDir, lock, opts)), guest: false };
  }
}

async function openAsHolder(
  dataDir: string,
  lock: DirLock,
  { notice, useTemplate = true, pgliteDriver = 'worker' }: OpenStoreOptions,
): Promise<Opened> {
  // Until the socket is up, others started at the same moment wait for it (openPgliteDir).
  const heartbeat = startLockHeartbeat(lock);
  let opening: Promise<Started> | undefined;
  try {
    await newStore(dataDir, useTemplate, notice);
    opening = pgliteDriver === 'worker' ? startInWorker(dataDir) : startOnMainThread(dataDir);
    opening.catch(() => undefined); // awaited below
    const [{ drizzle }, { migratePglite }, { createDrizzleStore }] = await Promise.all([
      import('drizzle-orm/pglite'),
      import('./migrate.js'),
      import('./drizzle-store.js'),
    ]);
    const { client, serve } = await opening;
    // drizzle's pglite driver calls query/exec/transaction: both clients answer them.
    const db = drizzle({ client: client as unknown as PGlite });
    const { applied, total } = await migratePglite(db);
    const shared = serve ? await share(dataDir, serve) : null;
    heartbeat.stop();
    const store = createDrizzleStore(db, {
      backend: 'pglite',
      location: dataDir,
      close: async () => {
        try {
          if (shared) withdraw(dataDir, shared.endpoint, shared.ownDir);
          if (!client.closed) await client.close();
        } finally {
          lock.release();
        }
      },
    });
    return { store, applied, total };
  } catch (err) {
    heartbeat.stop();
    await opening?.then(({ client }) => client.close()).catch(() => undefined);
    lock.release();
    if (err instanceof NaviError) throw err;
    throw new StorageError(
      'store_open_failed',
      `Cannot open the embedded database in ${dataDir}: ${firstLine(err)}. ` +
        'Move the directory aside to start fresh, or set DATABASE_URL to use PostgreSQL.',
      { cause: err },
    );
  }
}

/**
 * A directory without a database gets navi's migrated template (src/store/pgdata-template.ts)
 * instead of initdb; the user hears about the one-time cost. A template that cannot be unpacked
 * leaves the directory as it was, and PGlite runs initdb.
 */
async function newStore(dataDir: string, useTemplate: boolean, notice: ((message: string) => void) | undefined): Promise<void> {
  if (fs.existsSync(path.join(dataDir, VERSION_FILE))) return;
  notice?.(`creating the database in ${dataDir} (first run)`);
  if (!useTemplate) return;
  try {
    await unpackTemplate(dataDir);
  } catch {
    // initdb it is: slower, same result.
  }
}

/** PGlite's shared_buffers: enough for navi's tables, small enough to start fast. */
const PGLITE_SHARED_BUFFERS = '4MB';
/**
 * PGlite has one session: other processes reach it through the holder's wire server
 * (pglite-wire-server.cjs), which runs their statements on that same session, so no count of
 * guests needs more backends. The setting only sizes per-backend shared memory at start.
 */
const PGLITE_MAX_CONNECTIONS = 5;
// 4 MB of shared buffers (PostgreSQL's default is 128 MB): the memory is zeroed at every start —
// ~75 ms at 128 MB, ~25 ms less at 4 MB than at 16 — and navi's tables are small. With
// max_connections=5 (default 100), `PGlite.create` took 288 ms instead of 336 (README "Performance").
const PGLITE_START_PARAMS = ['-c', `shared_buffers=${PGLITE_SHARED_BUFFERS}`, '-c', `max_connections=${PGLITE_MAX_CONNECTIONS}`];

/** What both PGlite drivers offer the store: drizzle's pglite calls, and closing; the worker also serves other processes. */
interface Started {
  client: Pick<PgliteInWorker, 'closed' | 'close'>;
  serve?: (socketPath: string) => Promise<void>;
}

/**
 * Serves the database to other navi processes while this one holds it (the worker driver only).
 * Best effort: a store that cannot be shared still works here; others then get `store_locked`.
 */
async function share(dataDir: string, serve: (socketPath: string) => Promise<void>): Promise<{ endpoint: Endpoint; ownDir: string | undefined } | null> {
  let where: ReturnType<typeof socketPathFor> | undefined;
  try {
    where = socketPathFor(dataDir);
    // The lock is ours: a socket file left here belongs to a holder that was killed.
    fs.rmSync(where.socket, { force: true });
    await serve(where.socket);
    const endpoint = { pid: process.pid, socket: where.socket };
    advertise(dataDir, endpoint);
    return { endpoint, ownDir: where.ownDir };
  } catch {
    if (where?.ownDir !== undefined) fs.rmSync(where.ownDir, { recursive: true, force: true });
    return null;
  }
}

/**
 * The directory is held by another live navi process that serves it: connect to its socket as
 * to a PostgreSQL server (one connection, unnamed statements: the holder's single session is
 * shared with its own prepared statements). No migrations from here: the holder applied its own;
 * a schema other than ours is `store_locked`, as before sharing existed. Null: the holder did
 * not answer (it left meanwhile).
 */
async function openThroughHolder(dataDir: string, holder: Endpoint): Promise<Opened | null> {
  const [{ default: postgres }, { drizzle }, { pendingMigrations }, { createDrizzleStore }] = await Promise.all([
    import('postgres'),
    import('drizzle-orm/postgres-js'),
    import('./migrate.js'),
    import('./drizzle-store.js'),
  ]);
  const client = postgres({
    path: holder.socket,
    username: 'postgres',
    database: 'postgres',
    max: 1,
    prepare: false,
    onnotice: () => {},
    connect_timeout: DEFAULT_CONNECT_TIMEOUT_S,
    fetch_types: false,
    connection: { application_name: 'navi' },
  });
  const db = drizzle({ client });
  try {
    const { pending, total } = await pendingMigrations(db);
    if (pending !== 0) throw schemaMismatch(dataDir, holder.pid);
    const store = createDrizzleStore(db, {
      backend: 'pglite',
      location: `${dataDir} (through navi process ${holder.pid})`,
      close: () => client.end({ timeout: CLOSE_TIMEOUT_S }),
    });
    return { store, applied: 0, total };
  } catch (err) {
    await client.end({ timeout: 0 }).catch(() => undefined);
    if (err instanceof NaviError) throw err;
    // The holder went away meanwhile, or does not answer: the caller looks again.
    return null;
  }
}

/** The fast driver: PGlite in a worker thread, which opens the directory on another core while drizzle loads here. */
async function startInWorker(dataDir: string): Promise<Started> {
  const { PgliteInWorker } = await import('./pglite-worker.js');
  const client = await PgliteInWorker.open(dataDir, PGLITE_START_PARAMS);
  return { client, serve: (socketPath) => client.serve(socketPath) };
}

/** The plain driver (the oracle of the worker: `OpenStoreOptions.pgliteDriver`). */
async function startOnMainThread(dataDir: string): Promise<Started> {
  const { PGlite } = (await importModule('@electric-sql/pglite')) as typeof PgliteModule;
  return { client: await PGlite.create(dataDir, { startParams: [...PGlite.defaultStartParams, ...PGLITE_START_PARAMS] }) };
}

/**
 * Creates the data directory inside a private parent. PGlite creates its files world-writable
 * (0666) and no parent directories, so the directory and, when we create it, its parent are
 * made 0700; an existing parent (say, a project folder named by NAVI_DATA_DIR) is left alone.
 */
function prepareDataDir(dataDir: string): void {
  refuseForeignDir(dataDir);
  const parent = path.dirname(dataDir);
  try {
    const created = fs.mkdirSync(parent, { recursive: true, mode: 0o700 });
    // mkdir's mode is filtered by the umask; chmod makes the parent private whatever it is.
    if (created !== undefined) fs.chmodSync(parent, 0o700);
    try {
      fs.mkdirSync(dataDir, { mode: 0o700 });
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST') throw err;
      if (!fs.statSync(dataDir).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    }
    fs.chmodSync(dataDir, 0o700);
  } catch (err) {
    throw notWritable(dataDir, err);
  }
}

/**
 * A directory that holds something other than a navi database (`NAVI_DATA_DIR=.` or `$HOME`):
 * PGlite would fill it with ~22 PostgreSQL entries and the chmod above would make it private.
 * Refused before anything is written (exit 2); the directory is not touched.
 */
function refuseForeignDir(dataDir: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(dataDir);
  } catch {
    return; // missing (created below) or unreadable (reported below as not writable)
  }
  if (isNaviDataDir(names)) return;
  const shown = names.slice(0, 3).join(', ') + (names.length > 3 ? ', …' : '');
  throw new InvalidInputError(
    'data_dir_not_navi',
    `${dataDir} is not a navi data directory (it holds ${shown}); navi keeps its embedded database in a directory of its own: ` +
      'set NAVI_DATA_DIR (or db.data_dir) to a new or empty directory, e.g. ~/.local/share/navi/pgdata.',
  );
}

/** Empty, or holding a PostgreSQL data directory (`PG_VERSION`) or only navi's own files (lock, endpoint, unpacking marker). */
export function isNaviDataDir(names: readonly string[]): boolean {
  // `navi-unpacking`: a template unpacking was interrupted; unpackTemplate clears and redoes it.
  return names.includes(VERSION_FILE) || names.includes('navi-unpacking') || names.every((n) => n.startsWith('navi'));
}

function notWritable(dataDir: string, err: unknown): StorageError {
  const reason = errnoReason(errnoCode(err)) ?? firstLine(err);
  return new StorageError(
    'store_dir_not_writable',
    `Data directory ${dataDir} is not writable (${reason}); set NAVI_DATA_DIR to a writable directory, ` +
      'or DATABASE_URL to use PostgreSQL.',
    { cause: err },
  );
}

function errnoReason(code: string | undefined): string | undefined {
  switch (code ?? '') {
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EROFS':
      return 'read-only file system';
    case 'EEXIST': // mkdir -p over a regular file
    case 'ENOTDIR':
      return 'a path component is not a directory';
    case 'ENOSPC':
      return 'no space left on device';
    default:
      return undefined;
  }
}

function firstLine(err: unknown): string {
  return describeError(err).replace(/\.$/, '');
}
