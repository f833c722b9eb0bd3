/**
 * The store on embedded PGlite: the repository contract, plus what only the embedded backend
 * has (the directory lock, private permissions). One data directory for the whole file: a fresh
 * one costs seconds to initialise.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_FILE_NAME } from '../../src/store/lock.js';
import { migrateDatabase, openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/types.js';
import { defineRepositorySuite, newSession } from './repository-suite.js';
import { deadPid, runChild, tempDir } from './support.js';

let root: string;
let dataDir: string;
let store: Store;

async function reopen(): Promise<Store> {
  await store.close();
  store = await openStore({ dataDir });
  return store;
}

beforeAll(async () => {
  root = tempDir('pglite');
  // Two levels that do not exist yet: openStore must create them.
  dataDir = path.join(root, 'share', 'navi', 'pgdata');
  store = await openStore({ dataDir });
});

afterAll(async () => {
  await store?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

describe('PGlite store', () => {
  it('reports its backend and directory', () => {
    expect(store.backend).toBe('pglite');
    expect(store.location).toBe(dataDir);
  });

  defineRepositorySuite({ store: () => store, reopen });

  it('keeps the data directory in a private (0700) parent', () => {
    expect(fs.statSync(path.dirname(dataDir)).mode & 0o777).toBe(0o700);
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
  });

  it('a second open of the same directory in this process fails with store_locked', async () => {
    const lockPath = path.join(dataDir, LOCK_FILE_NAME);
    const err = await openStore({ dataDir }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'StorageError', code: 'store_locked', exitCode: 1 });
    const message = (err as Error).message;
    expect(message).toContain(lockPath);
    expect(message).toContain(`process ${process.pid}`);
    expect(message).toContain('DATABASE_URL');
    expect(message).not.toContain('\n');
    // The failed attempt did not disturb the holder.
    await store.messages.list('anything');
  });

  const openInChild = async (): Promise<{ opened?: boolean; location?: string; code?: string; message?: string }> => {
    const child = await runChild(`
      import { openStore } from './src/store/open.ts';
      try {
        const s = await openStore({ dataDir: ${JSON.stringify(dataDir)} });
        const sessions = await s.sessions.list();
        await s.close();
        console.log(JSON.stringify({ opened: true, location: s.location, sessions: sessions.length }));
      } catch (e) {
        console.log(JSON.stringify({ code: e.code, message: e.message }));
      }
    `);
    return JSON.parse(child.stdout.trim()) as { opened?: boolean; location?: string; code?: string; message?: string };
  };

  it('another process opening the directory goes through this one (it serves the database on its socket)', async () => {
    expect(await openInChild()).toMatchObject({ opened: true, location: `${dataDir} (through navi process ${process.pid})` });
  });

  it('another process that cannot reach the holder fails with store_locked naming it', async () => {
    const endpoint = path.join(dataDir, 'navi.endpoint');
    fs.renameSync(endpoint, `${endpoint}.hidden`);
    try {
      const result = await openInChild();
      expect(result.code).toBe('store_locked');
      expect(result.message).toContain(`process ${process.pid} on ${os.hostname()}`);
    } finally {
      fs.renameSync(`${endpoint}.hidden`, endpoint);
    }
  });

  it('close releases the lock; a lock left by a killed process is taken over', async () => {
    const lockPath = path.join(dataDir, LOCK_FILE_NAME);
    await store.close();
    expect(fs.existsSync(lockPath)).toBe(false);

    const stale = { pid: deadPid(), hostname: os.hostname(), started_at: new Date().toISOString() };
    fs.writeFileSync(lockPath, JSON.stringify(stale));
    const started = performance.now();
    store = await openStore({ dataDir });
    const openMs = performance.now() - started;
    const owner = JSON.parse(fs.readFileSync(lockPath, 'utf8')) as { pid: number };
    expect(owner.pid).toBe(process.pid);
    console.info(`PGlite open of an existing directory: ${openMs.toFixed(0)} ms`);

    // The data survived the takeover.
    const session = newSession();
    await store.sessions.create(session);
    expect(await store.sessions.get(session.id)).not.toBeNull();
  });

  it('a killed process (no close) leaves a lock the next open takes over', async () => {
    await store.close();
    const child = await runChild(`
      import { openStore } from './src/store/open.ts';
      await openStore({ dataDir: ${JSON.stringify(dataDir)} });
      console.log('open');
      process.kill(process.pid, 'SIGKILL');
    `);
    expect(child.stdout.trim()).toBe('open');
    expect(fs.existsSync(path.join(dataDir, LOCK_FILE_NAME))).toBe(true);
    store = await openStore({ dataDir });
    expect((await store.sessions.list({ limit: 1 })).length).toBe(1);
  });

  it('migrateDatabase reports an up-to-date directory', async () => {
    await store.close();
    const report = await migrateDatabase({ dataDir });
    expect(report).toEqual({ backend: 'pglite', location: dataDir, applied: 0, total: expect.any(Number) as number });
    expect(report.total).toBeGreaterThanOrEqual(1);
    store = await openStore({ dataDir });
  });
});
