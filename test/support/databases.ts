/**
 * Both storage backends for the scenario tests (SPEC §9, §11). `forEachBackend` declares the
 * scenarios for PGlite, and for PostgreSQL when DATABASE_URL is set (CI sets it); with both at
 * hand each runs on one of them, chosen by its name (test/support/store-choice.ts), except the
 * store's own contract (`both`). Every `fresh()` database is migrated and empty, and removed after
 * the test file.
 *
 * Migrating a fresh database costs seconds, so each test copies a migrated template, made once by
 * the built CLI (`navi db migrate`) for the current migrations and shared by parallel test files
 * and later runs (no global setup: runs that do not include the scenario tests pay nothing):
 *  - PGlite: a data directory cached under a key made of the migrations and the PGlite version,
 *    in `/dev/shm` where it is a memory file system (`pgliteParentDir`), copied file by file;
 *  - PostgreSQL: a database `navi_scn_tpl_<key>` on DATABASE_URL's server (the key: the migrations
 *    and what else `db migrate` creates there, pg-boss's schema), copied with
 *    `CREATE DATABASE … TEMPLATE`. It refuses connections (`allow_connections false`): a copy
 *    fails while anyone is connected to it.
 * Both are made race-safely: each creator builds its own under a temporary name and renames it
 * into place last (so no one copies a half-migrated template); a creator that finds the name
 * taken drops its own and uses the winner's. Builds left by a crashed run (after an hour) and
 * templates of other migrations unused for a day are dropped.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { TestRunner, afterAll, describe } from 'vitest';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/types.js';
import { CLI_PATH, REPO_ROOT, assertBuilt, makeTempDir } from './cli.js';
import { everyStoreRunsAll, storeFor } from './store-choice.js';

/** Prefix of the PostgreSQL databases the scenario tests create. */
export const DB_PREFIX = 'navi_scn_';

export type BackendKind = 'pglite' | 'postgres';

/** One test's database. */
export interface TestDatabase {
  readonly kind: BackendKind;
  /** Environment entries that point the CLI at it (`NAVI_DATA_DIR` or `DATABASE_URL`). */
  readonly env: Record<string, string>;
  /** PGlite data directory (PostgreSQL: a path that does not exist). */
  readonly dataDir: string;
  /** PostgreSQL URL (PGlite: undefined). */
  readonly url: string | undefined;
  /** Opens the store with navi's own code, to read rows after a run (close it!). */
  open(): Promise<Store>;
  /** Opens, runs `fn`, closes. */
  withStore<T>(fn: (store: Store) => Promise<T>): Promise<T>;
}

export interface Backend {
  readonly kind: BackendKind;
  /** A fresh, migrated, empty database. */
  fresh(): Promise<TestDatabase>;
}

/** `adminUrl` naming another database. */
export function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** A handle on one database: how to point navi at it (`env`) and how to read it in-process. */
export function databaseHandle(kind: BackendKind, env: Record<string, string>, dataDir: string, url: string | undefined): TestDatabase {
  const open = (): Promise<Store> => openStore({ url, dataDir });
  return {
    kind,
    env,
    dataDir,
    url,
    open,
    async withStore(fn) {
      const store = await open();
      try {
        return await fn(store);
      } finally {
        await store.close();
      }
    },
  };
}

/** `navi db migrate` against the database `env` names. */
function migrateWithCli(env: Record<string, string>): Promise<void> {
  assertBuilt();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_PATH, 'db', 'migrate'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.tmpdir(), CI: '1', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`navi db migrate failed (${String(code)}): ${stderr}`))));
  });
}

/**
 * Hash of everything that decides a migrated database's contents: the migrations, plus the
 * contents of `extra` (files under REPO_ROOT: the PGlite version, or what else `db migrate`
 * creates on PostgreSQL).
 */
function templateKey(extra: readonly string[]): string {
  const hash = createHash('sha256');
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const abs = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(abs);
      else hash.update(`${path.relative(REPO_ROOT, abs)}\0`).update(fs.readFileSync(abs));
    }
  };
  walk(path.join(REPO_ROOT, 'drizzle'));
  for (const file of extra) hash.update(fs.readFileSync(path.join(REPO_ROOT, file)));
  return hash.digest('hex').slice(0, 16);
}

/** What decides a PGlite template besides the migrations. */
const PGLITE_TEMPLATE_INPUTS = ['node_modules/@electric-sql/pglite/package.json'];

/** Templates made for other migrations are removed when older than this (another checkout may still use a newer one). */
const TEMPLATE_MAX_AGE_MS = 24 * 60 * 60 * 1000;

function pruneOldTemplates(cache: string, keep: string): void {
  for (const entry of fs.readdirSync(cache)) {
    const dir = path.join(cache, entry);
    if (dir === keep) continue;
    try {
      if (Date.now() - fs.statSync(dir).mtimeMs > TEMPLATE_MAX_AGE_MS) fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // Someone else removed it first.
    }
  }
}

/** `statfs` type of a memory file system (Linux `TMPFS_MAGIC`). */
const TMPFS_MAGIC = 0x01021994;

let pgliteParent: string | undefined;

/**
 * Where the PGlite data directories of the tests go (the template and every copy of it):
 * `NAVI_TEST_DB_DIR` when set (say `/tmp`, to run them on a disk), else `/dev/shm` when it is a
 * writable memory file system, else the OS temp directory. A data directory is ~1,000 files
 * (39 MB) copied from the template for each test and removed after its file; on this VM's ext4
 * the copy and the removal cost ~2.5 times their time on tmpfs, and they run in the test worker.
 * navi's own code sees the same files, permissions, locks and Unix sockets either way.
 */
export function pgliteParentDir(): string {
  pgliteParent ??= process.env.NAVI_TEST_DB_DIR || (isWritableTmpfs('/dev/shm') ? '/dev/shm' : os.tmpdir());
  return pgliteParent;
}

function isWritableTmpfs(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.W_OK);
    return fs.statfsSync(dir).type === TMPFS_MAGIC;
  } catch {
    return false; // no such directory (macOS), or not writable
  }
}

let pgliteTemplatePromise: Promise<string> | undefined;

/**
 * The migrated PGlite template for the current migrations, created on first use. Concurrent
 * creators each build their own copy and `rename` it into place; the first wins, the others
 * use it. The cache directory is private (0700), as PGlite's files are world-writable.
 */
function pgliteTemplate(): Promise<string> {
  pgliteTemplatePromise ??= (async () => {
    const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
    const cache = path.join(pgliteParentDir(), `navi-scn-templates-${uid}`);
    fs.mkdirSync(cache, { recursive: true, mode: 0o700 });
    const final = path.join(cache, templateKey(PGLITE_TEMPLATE_INPUTS));
    const dataDir = path.join(final, 'pgdata');
    if (fs.existsSync(dataDir)) return dataDir;
    const building = fs.mkdtempSync(path.join(cache, 'building-'));
    try {
      await migrateWithCli({ NAVI_DATA_DIR: path.join(building, 'pgdata') });
      try {
        fs.renameSync(building, final);
        pruneOldTemplates(cache, final);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
      }
    } finally {
      fs.rmSync(building, { recursive: true, force: true });
    }
    return dataDir;
  })();
  return pgliteTemplatePromise;
}

function pgliteBackend(): Backend & { cleanup(): void } {
  const dirs: string[] = [];
  return {
    kind: 'pglite',
    async fresh() {
      const template = await pgliteTemplate();
      // mkdtemp makes the parent 0700, as navi wants for PGlite's world-writable files.
      const parent = makeTempDir('db', pgliteParentDir());
      dirs.push(parent);
      const dataDir = path.join(parent, 'pgdata');
      fs.cpSync(template, dataDir, { recursive: true });
      return databaseHandle('pglite', { NAVI_DATA_DIR: dataDir }, dataDir, undefined);
    },
    cleanup() {
      for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * What decides a PostgreSQL template besides the migrations: `db migrate` also creates the job
 * queue there (pg-boss's schema, and navi's schedule table in schedules.ts, the queue in engine.ts).
 */
const POSTGRES_TEMPLATE_INPUTS = ['node_modules/pg-boss/package.json', 'src/queue/engine.ts', 'src/queue/schedules.ts'];

/** A template is marked used at most this often (a catalog write per test file would be noise). */
const TOUCH_INTERVAL_MS = 60 * 60 * 1000;
/** A template build older than this was left by a crashed run (a build takes seconds). */
const BUILD_MAX_AGE_MS = 60 * 60 * 1000;
/** Backoff before each retry of `CREATE DATABASE … TEMPLATE` that finds someone connected to the template. */
const BUSY_RETRY_MS = [100, 250, 500, 1000, 2000];

const TEMPLATE_PREFIX = `${DB_PREFIX}tpl_`;
const BUILD_PREFIX = `${DB_PREFIX}tplb_`;
const USED_COMMENT = 'navi scenario-test template, last used ';
const BUILD_COMMENT = 'navi scenario-test template build, started ';

/** SQLSTATE of a PostgreSQL error (postgres.js puts it on `code`). */
function sqlState(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

/** 55006 object_in_use: "database … is being accessed by other users". */
const OBJECT_IN_USE = '55006';
/** 42P04 duplicate_database. */
const DUPLICATE_DATABASE = '42P04';
/** 3D000 invalid_catalog_name: the database does not exist. */
const NO_SUCH_DATABASE = '3D000';

/** `fn`, retried with a backoff while the database it needs is in use by another session. */
async function whileInUse<T>(what: string, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (sqlState(err) !== OBJECT_IN_USE) throw err;
      const delay = BUSY_RETRY_MS[attempt];
      if (delay === undefined) {
        throw new Error(`${what}: the database is still in use by other sessions after ${String(attempt + 1)} attempts (${(err as Error).message}); is another test run connected to it?`, { cause: err });
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/** The time in a comment written with `prefix`, or undefined (no comment, or someone else's). */
function commentTime(comment: string | null, prefix: string): number | undefined {
  if (comment === null || !comment.startsWith(prefix)) return undefined;
  const ms = Date.parse(comment.slice(prefix.length));
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * Drops builds left by crashed runs and templates of other migrations unused for a day. Those
 * with a session are skipped, and a plain DROP (no FORCE) fails if one connects meanwhile, so
 * nothing in use is dropped; errors are ignored (another run dropped it first, or it is in use).
 */
async function pruneOldPostgresTemplates(sql: postgres.Sql, keep: string): Promise<void> {
  const rows = await sql<Array<{ datname: string; comment: string | null }>>`
    select datname, shobj_description(oid, 'pg_database') as comment from pg_database d
    where (datname like ${`${BUILD_PREFIX}%`} or datname like ${`${TEMPLATE_PREFIX}%`})
      and not exists (select 1 from pg_stat_activity a where a.datname = d.datname)`;
  const now = Date.now();
  for (const { datname, comment } of rows) {
    if (datname === keep) continue;
    const build = datname.startsWith(BUILD_PREFIX);
    const at = commentTime(comment, build ? BUILD_COMMENT : USED_COMMENT);
    if (at === undefined || now - at < (build ? BUILD_MAX_AGE_MS : TEMPLATE_MAX_AGE_MS)) continue;
    await sql.unsafe(`drop database if exists "${datname}"`).catch(() => undefined);
  }
}

/**
 * Records that `name` is in use now (at most once an hour), so other runs' pruning keeps it, and
 * prunes. Best effort: a failure here costs nothing but a later prune.
 */
async function touchPostgresTemplate(sql: postgres.Sql, name: string, comment: string | null): Promise<void> {
  const at = commentTime(comment, USED_COMMENT);
  if (at !== undefined && Date.now() - at < TOUCH_INTERVAL_MS) return;
  try {
    await sql.unsafe(`comment on database "${name}" is '${USED_COMMENT}${new Date().toISOString()}'`);
    await pruneOldPostgresTemplates(sql, name);
  } catch {
    // Dropped or renamed meanwhile: the copy that follows says so if it matters.
  }
}

/**
 * The migrated template database for the current migrations on `adminUrl`'s server, created on
 * first use: built as `navi_scn_tplb_<key>_<random>` and renamed to `navi_scn_tpl_<key>` once
 * migrated; if another creator renamed theirs first, ours is dropped and theirs used.
 */
async function postgresTemplate(sql: postgres.Sql, adminUrl: string): Promise<string> {
  const key = templateKey(POSTGRES_TEMPLATE_INPUTS);
  const name = `${TEMPLATE_PREFIX}${key}`;
  const existing = await sql<Array<{ comment: string | null }>>`
    select shobj_description(oid, 'pg_database') as comment from pg_database where datname = ${name}`;
  if (existing[0]) {
    await touchPostgresTemplate(sql, name, existing[0].comment);
    return name;
  }
  const building = `${BUILD_PREFIX}${key}_${randomBytes(4).toString('hex')}`;
  await sql.unsafe(`create database "${building}"`);
  try {
    await sql.unsafe(`comment on database "${building}" is '${BUILD_COMMENT}${new Date().toISOString()}'`);
    await migrateWithCli({ DATABASE_URL: databaseUrl(adminUrl, building) });
    // No session may connect to the template (a copy fails while one is connected); the
    // migrating CLI's session may take a moment to end after it exits.
    await sql.unsafe(`alter database "${building}" with allow_connections false`);
    await whileInUse(`renaming the template ${building}`, () => sql.unsafe(`alter database "${building}" rename to "${name}"`));
  } catch (err) {
    // Another creator renamed theirs first: use it (ours is dropped below).
    if (sqlState(err) !== DUPLICATE_DATABASE) throw err;
    return name;
  } finally {
    await sql.unsafe(`drop database if exists "${building}" with (force)`);
  }
  await touchPostgresTemplate(sql, name, null);
  return name;
}

/** One template lookup per server and process (per test file, as vitest isolates files). */
const postgresTemplates = new Map<string, Promise<string>>();

function postgresBackend(adminUrl: string): Backend & { cleanup(): Promise<void> } {
  let admin: postgres.Sql | undefined;
  const created: string[] = [];
  const prefix = `${DB_PREFIX}${randomBytes(4).toString('hex')}`;
  let counter = 0;

  const connect = (): postgres.Sql => (admin ??= postgres(adminUrl, { max: 1, onnotice: () => {} }));
  const templateName = (): Promise<string> => {
    let template = postgresTemplates.get(adminUrl);
    if (!template) {
      const made = postgresTemplate(connect(), adminUrl);
      postgresTemplates.set(adminUrl, made);
      // A failure is not kept: the next test tries again.
      made.catch(() => postgresTemplates.get(adminUrl) === made && postgresTemplates.delete(adminUrl));
      template = made;
    }
    return template;
  };
  const copy = async (name: string, retried = false): Promise<void> => {
    const from = await templateName();
    try {
      await whileInUse(`copying the template ${from}`, () => connect().unsafe(`create database "${name}" template "${from}"`));
    } catch (err) {
      // Another run's pruning dropped it between our lookup and the copy: make it again, once.
      if (sqlState(err) !== NO_SUCH_DATABASE || retried) throw err;
      postgresTemplates.delete(adminUrl);
      await copy(name, true);
    }
  };

  return {
    kind: 'postgres',
    async fresh() {
      const name = `${prefix}_${counter++}`;
      await copy(name);
      created.push(name);
      const url = databaseUrl(adminUrl, name);
      return databaseHandle('postgres', { DATABASE_URL: url }, path.join(os.tmpdir(), 'navi-scn-no-pglite-here'), url);
    },
    async cleanup() {
      if (!admin) return;
      for (const name of created.splice(0).reverse()) await admin.unsafe(`drop database if exists "${name}" with (force)`);
      await admin.end({ timeout: 2 });
      admin = undefined;
    },
  };
}

/**
 * Declares the scenarios in `fn` on the backends (`only`: for behaviour of one backend, such as
 * PGlite's directory lock). Each test or group declared directly in `fn` runs on one store,
 * chosen by its file and name (test/support/store-choice.ts), when both are at hand; `both`
 * (one line: why the behaviour depends on the store) runs all of them on both. Databases made
 * with `backend.fresh()` are removed after the file.
 */
export function forEachBackend(fn: (backend: Backend) => void, opts: { only?: BackendKind; both?: string } = {}): void {
  const all = opts.both !== undefined || opts.only !== undefined || everyStoreRunsAll(process.env);
  if (opts.only !== 'postgres') {
    describe('PGlite', () => {
      const backend = pgliteBackend();
      afterAll(() => backend.cleanup());
      fn(backend);
      if (!all) keepOwnShare('pglite');
    });
  }
  if (opts.only === 'pglite') return;
  const adminUrl = process.env.DATABASE_URL;
  describe.skipIf(!adminUrl)('PostgreSQL', () => {
    const backend = postgresBackend(adminUrl ?? '');
    afterAll(() => backend.cleanup());
    fn(backend);
    if (!all) keepOwnShare('postgres');
  });
}

/**
 * In the backend's `describe` being collected: drops the tests and groups `fn` declared that
 * belong to the other store. vitest's collector keeps them in its public `tasks` list; a
 * backend left with none is skipped as a whole (`suite.mode`), so its hooks (servers, databases)
 * never start and vitest does not fail it for having no tests.
 */
function keepOwnShare(kind: BackendKind): void {
  const collector = TestRunner.getCurrentSuite();
  const file = path.relative(REPO_ROOT, collector.file.filepath).split(path.sep).join('/');
  const own = collector.tasks.filter((task) => storeFor(file, task.name) === kind);
  collector.tasks.splice(0, collector.tasks.length, ...own);
  if (own.length === 0 && collector.suite !== undefined) collector.suite.mode = 'skip';
}
