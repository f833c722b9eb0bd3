/**
 * The store on a real PostgreSQL server (runs when DATABASE_URL is set, as in CI). Each run
 * creates its own databases next to the one DATABASE_URL names and drops them afterwards, so
 * parallel test files and CI jobs never see each other's rows.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { migrateDatabase, openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/types.js';
import { defineRepositorySuite, newSession } from './repository-suite.js';

const adminUrl = process.env.DATABASE_URL;

/** DATABASE_URL with another database name. */
function urlFor(database: string): string {
  const url = new URL(adminUrl ?? '');
  url.pathname = `/${database}`;
  return url.toString();
}

describe.skipIf(!adminUrl)('PostgreSQL store', () => {
  const suffix = randomBytes(4).toString('hex');
  const database = `navi_test_${suffix}`;
  const created: string[] = [];
  let admin: postgres.Sql;
  let url: string;
  let store: Store;

  async function createDatabase(name: string): Promise<string> {
    await admin.unsafe(`create database "${name}"`);
    created.push(name);
    return urlFor(name);
  }

  async function reopen(): Promise<Store> {
    await store.close();
    store = await openStore({ url, dataDir: '/nonexistent' });
    return store;
  }

  beforeAll(async () => {
    admin = postgres(adminUrl ?? '', { max: 1, onnotice: () => {} });
    url = await createDatabase(database);
    store = await openStore({ url, dataDir: '/nonexistent' });
  });

  afterAll(async () => {
    await store?.close();
    for (const name of created) await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin?.end({ timeout: 2 });
  });

  it('reports its backend and the redacted URL', async () => {
    expect(store.backend).toBe('postgres');
    expect(store.location).toBe(url);
    const withPassword = new URL(url);
    withPassword.password = 'hunter2';
    const other = await openStore({ url: withPassword.toString(), dataDir: '/nonexistent' });
    try {
      expect(other.location).toContain(':***@');
      expect(other.location).not.toContain('hunter2');
    } finally {
      await other.close();
    }
  });

  defineRepositorySuite({ store: () => store, reopen });

  it('two processes appending to one session get distinct, gapless seq numbers', async () => {
    const session = newSession();
    await store.sessions.create(session);
    const second = await openStore({ url, dataDir: '/nonexistent' });
    try {
      const writer = (s: Store, tag: string) => async () => {
        for (let i = 0; i < 40; i++) await s.messages.append(session.id, { role: 'user', content: `${tag}${i}` });
      };
      await Promise.all([writer(store, 'a')(), writer(second, 'b')()]);
    } finally {
      await second.close();
    }
    const rows = await store.messages.list(session.id);
    expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: 80 }, (_, i) => i + 1));
    expect(await store.context.load(session.id)).toHaveLength(80);
  });

  it('two processes committing the same loop iteration: one wins, the other gets iteration_exists', async () => {
    const session = newSession({ kind: 'loop' });
    await store.sessions.create(session);
    const run = await store.loopRuns.create({
      sessionId: session.id,
      taskName: 'race',
      task: {},
      config: {},
      cwd: '/work/repo',
      maxIterations: 5,
    });
    const second = await openStore({ url, dataDir: '/nonexistent' });
    const row = (tag: string) => ({
      iteration: 1,
      phase: tag,
      indicators: {},
      evidence: {},
      stateHash: '9ea082',
      gateDecision: 'continue',
      gateReason: null,
      exitSignal: null,
      statusBlock: tag,
      decision: null,
      promptTokens: 1,
      completionTokens: 1,
      durationMs: 1,
      startedAt: new Date(),
      finishedAt: new Date(),
    });
    let results: PromiseSettledResult<unknown>[];
    try {
      results = await Promise.allSettled([
        store.loopRuns.commitIteration(run.id, row('A'), { hashHistory: ['aaaaaa'] }),
        second.loopRuns.commitIteration(run.id, row('B'), { hashHistory: ['bbbbbb'] }),
      ]);
    } finally {
      await second.close();
    }
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected');
    expect(rejected?.reason).toMatchObject({ code: 'iteration_exists' });
    // The run row carries the winner's counters, never a mix.
    const [stored] = await store.loopRuns.listIterations(run.id);
    const winner = stored?.phase === 'A' ? 'aaaaaa' : 'bbbbbb';
    expect((await store.loopRuns.get(run.id))?.hashHistory).toEqual([winner]);
  });

  it('stores todos as a jsonb array (not a JSON string)', async () => {
    const session = newSession();
    await store.sessions.create(session);
    await store.state.setTodos(session.id, [{ id: 1, text: 'a', status: 'pending' }]);
    const raw = postgres(url, { max: 1, onnotice: () => {} });
    try {
      const [row] = await raw<{ t: string }[]>`select jsonb_typeof(items) as t from todos where session_id = ${session.id}`;
      expect(row?.t).toBe('array');
    } finally {
      await raw.end({ timeout: 2 });
    }
  });

  it('processes migrating a fresh database at the same time all succeed, silently', async () => {
    const freshUrl = await createDatabase(`${database}_race`);
    const log = vi.spyOn(console, 'log');
    try {
      const stores = await Promise.all([1, 2, 3].map(() => openStore({ url: freshUrl, dataDir: '/nonexistent' })));
      await Promise.all(stores.map((s) => s.close()));
      // postgres.js prints server notices with console.log by default; navi must not.
      expect(log).not.toHaveBeenCalled();
    } finally {
      log.mockRestore();
    }
    const raw = postgres(freshUrl, { max: 1, onnotice: () => {} });
    try {
      const [row] = await raw<{ n: string }[]>`select count(*) as n from drizzle.__navi_migrations`;
      const report = await migrateDatabase({ url: freshUrl, dataDir: '/nonexistent' });
      expect(Number(row?.n)).toBe(report.total);
      expect(report).toMatchObject({ backend: 'postgres', applied: 0 });
    } finally {
      await raw.end({ timeout: 2 });
    }
  });

  it('migrateDatabase applies the migrations to an empty database', async () => {
    const freshUrl = await createDatabase(`${database}_cli`);
    const report = await migrateDatabase({ url: freshUrl, dataDir: '/nonexistent' });
    expect(report.applied).toBe(report.total);
    expect(report.total).toBeGreaterThanOrEqual(1);
  });

  it('a missing database is a StorageError that names it', async () => {
    const err = await openStore({ url: urlFor(`${database}_missing`), dataDir: '/nonexistent' }).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ name: 'StorageError', code: 'store_database_missing' });
    expect((err as Error).message).toContain(`"${database}_missing"`);
  });
});
