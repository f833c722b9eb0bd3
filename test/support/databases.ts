/**
 * Both storage backends for the scenario tests (SPEC §9, §11). `forEachBackend` declares a
 * scenario once per backend: PGlite always, PostgreSQL when DATABASE_URL is set (CI sets it).
 * Every `fresh()` database is migrated and empty, and removed after the test file.
 *
 * Migrating a fresh database costs seconds on PGlite, so each test copies a migrated template:
 *  - PGlite: a data directory migrated once by the built CLI (`navi db migrate`) and cached in
 *    the OS temp directory under a key made of the migrations and the PGlite version, so it is
 *    shared by parallel test files and later runs (no global setup: runs that do not include the
 *    scenario tests pay nothing);
 *  - PostgreSQL: a database migrated the same way once per test file, copied with
 *    `CREATE DATABASE … TEMPLATE`.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, describe } from 'vitest';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/types.js';
import { CLI_PATH, REPO_ROOT, assertBuilt, makeTempDir } from './cli.js';

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

/** Hash of everything that decides a migrated database's files: the migrations and PGlite. */
function templateKey(): string {
  const hash = createHash('sha256');
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const abs = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(abs);
      else hash.update(`${path.relative(REPO_ROOT, abs)}\0`).update(fs.readFileSync(abs));
    }
  };
  walk(path.join(REPO_ROOT, 'drizzle'));
  hash.update(fs.readFileSync(path.join(REPO_ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json')));
  return hash.digest('hex').slice(0, 16);
}

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

let pgliteTemplatePromise: Promise<string> | undefined;

/**
 * The migrated PGlite template for the current migrations, created on first use. Concurrent
 * creators each build their own copy and `rename` it into place; the first wins, the others
 * use it. The cache directory is private (0700), as PGlite's files are world-writable.
 */
function pgliteTemplate(): Promise<string> {
  pgliteTemplatePromise ??= (async () => {
    const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
    const cache = path.join(os.tmpdir(), `navi-scn-templates-${uid}`);
    fs.mkdirSync(cache, { recursive: true, mode: 0o700 });
    const final = path.join(cache, templateKey());
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
      const parent = makeTempDir('db');
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

function postgresBackend(adminUrl: string): Backend & { cleanup(): Promise<void> } {
  let admin: postgres.Sql | undefined;
  let template: Promise<string> | undefined;
  const created: string[] = [];
  const prefix = `${DB_PREFIX}${randomBytes(4).toString('hex')}`;
  let counter = 0;

  const connect = (): postgres.Sql => (admin ??= postgres(adminUrl, { max: 1, onnotice: () => {} }));
  const templateName = (): Promise<string> => {
    template ??= (async () => {
      const name = `${prefix}_tpl`;
      await connect().unsafe(`create database "${name}"`);
      created.push(name);
      await migrateWithCli({ DATABASE_URL: databaseUrl(adminUrl, name) });
      return name;
    })();
    return template;
  };

  return {
    kind: 'postgres',
    async fresh() {
      const from = await templateName();
      const name = `${prefix}_${counter++}`;
      await connect().unsafe(`create database "${name}" template "${from}"`);
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
 * Declares the scenarios in `fn` once per backend, in a `describe` named after it (`only`: for
 * behaviour of one backend, such as PGlite's directory lock). Databases made with
 * `backend.fresh()` are removed after the file.
 */
export function forEachBackend(fn: (backend: Backend) => void, opts: { only?: BackendKind } = {}): void {
  if (opts.only !== 'postgres') {
    describe('PGlite', () => {
      const backend = pgliteBackend();
      afterAll(() => backend.cleanup());
      fn(backend);
    });
  }
  if (opts.only === 'pglite') return;
  const adminUrl = process.env.DATABASE_URL;
  describe.skipIf(!adminUrl)('PostgreSQL', () => {
    const backend = postgresBackend(adminUrl ?? '');
    afterAll(() => backend.cleanup());
    fn(backend);
  });
}
