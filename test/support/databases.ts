/**
 * Both storage backends for the scenario tests (SPEC §9, §11). `forEachBackend` declares a
 * scenario once per backend: PGlite always, PostgreSQL when DATABASE_URL is set (CI sets it).
 * Every `fresh()` database is migrated and empty, copied from a template the global setup
 * prepared, so tests never see each other's sessions; they are removed after the file.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, inject } from 'vitest';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/types.js';
import { CLI_PATH, assertBuilt, makeTempDir } from './cli.js';
import { DB_PREFIX, databaseUrl } from './global-setup.js';

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

function handle(kind: BackendKind, env: Record<string, string>, dataDir: string, url: string | undefined): TestDatabase {
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

/** `navi db migrate` against `env` (fallback when the global setup did not run). */
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

let localPgliteTemplate: Promise<string> | undefined;

function pgliteTemplate(): Promise<string> {
  const provided = inject('pgliteTemplate');
  if (provided) return Promise.resolve(provided);
  localPgliteTemplate ??= (async () => {
    const dir = path.join(makeTempDir('template'), 'pgdata');
    await migrateWithCli({ NAVI_DATA_DIR: dir });
    return dir;
  })();
  return localPgliteTemplate;
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
      return handle('pglite', { NAVI_DATA_DIR: dataDir }, dataDir, undefined);
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
  const prefix = `${inject('postgresPrefix') || `${DB_PREFIX}${randomBytes(4).toString('hex')}`}_${process.pid}`;
  let counter = 0;

  const connect = (): postgres.Sql => (admin ??= postgres(adminUrl, { max: 1, onnotice: () => {} }));
  const templateName = (): Promise<string> => {
    const provided = inject('postgresTemplate');
    if (provided) return Promise.resolve(provided);
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
      return handle('postgres', { DATABASE_URL: url }, path.join(os.tmpdir(), 'navi-scn-no-pglite-here'), url);
    },
    async cleanup() {
      if (!admin) return;
      // Templates last: a database cannot be dropped while another is being copied from it.
      for (const name of created.reverse()) await admin.unsafe(`drop database if exists "${name}" with (force)`);
      await admin.end({ timeout: 2 });
      admin = undefined;
    },
  };
}

/**
 * Declares the scenarios in `fn` once per backend, in a `describe` named after it. Databases
 * made with `backend.fresh()` are removed after the file.
 */
export function forEachBackend(fn: (backend: Backend) => void): void {
  describe('PGlite', () => {
    const backend = pgliteBackend();
    afterAll(() => backend.cleanup());
    fn(backend);
  });
  const adminUrl = process.env.DATABASE_URL;
  describe.skipIf(!adminUrl)('PostgreSQL', () => {
    const backend = postgresBackend(adminUrl ?? '');
    afterAll(() => backend.cleanup());
    fn(backend);
  });
}
