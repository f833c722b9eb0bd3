/**
 * Upgrading: a database an earlier navi migrated (only the first migration applied, with rows
 * in it) takes the later migrations cleanly and keeps its data. PGlite always; PostgreSQL when
 * DATABASE_URL is set, in a database this file creates and drops.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_FOLDER, MIGRATION_CONFIG } from '../../src/store/migrate.js';
import { migrateDatabase, openStore } from '../../src/store/open.js';
import type { OpenStoreOptions } from '../../src/store/types.js';
import { tempDir } from './support.js';

const root = tempDir('migration');
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** A migrations folder holding only the first `count` shipped migrations (an older navi). */
function olderMigrations(count: number): string {
  const folder = path.join(root, `migrations-${count}`);
  fs.mkdirSync(path.join(folder, 'meta'), { recursive: true });
  const journal = JSON.parse(fs.readFileSync(path.join(MIGRATIONS_FOLDER, 'meta', '_journal.json'), 'utf8')) as {
    entries: { tag: string }[];
  };
  journal.entries = journal.entries.slice(0, count);
  fs.writeFileSync(path.join(folder, 'meta', '_journal.json'), JSON.stringify(journal));
  for (const { tag } of journal.entries) fs.copyFileSync(path.join(MIGRATIONS_FOLDER, `${tag}.sql`), path.join(folder, `${tag}.sql`));
  return folder;
}

/** Rows an 0000-era navi wrote: a loop session with a child, messages, context, todos. */
const OLD_ROWS = `
  insert into sessions (id, kind, profile, cwd, parent_id, title, model, prompt_tokens, completion_tokens, message_seq, context_seq)
    values ('old-parent', 'loop', 'coder', '/work/repo', null, 'fix tests', 'qwen3:8b', 5000000000, 42, 2, 2),
           ('old-child', 'subagent', 'researcher', '/work/repo', 'old-parent', '', 'qwen3:8b', 0, 0, 0, 0);
  insert into messages (session_id, seq, role, content, tool_calls, is_plan)
    values ('old-parent', 1, 'user', 'fix the tests', null, false),
           ('old-parent', 2, 'assistant', '', '[{"name":"shell","arguments":{"command":"npm test"}}]', false);
  insert into context (session_id, seq, role, content, tool_calls)
    values ('old-parent', 1, 'user', 'fix the tests', null),
           ('old-parent', 2, 'assistant', '', '[{"name":"shell","arguments":{"command":"npm test"}}]');
  insert into todos (session_id, items) values ('old-parent', '[{"id":1,"text":"run tests","status":"pending"}]');
`;

/** Opens the upgraded database with navi's code and checks old rows and new tables. */
async function expectUpgraded(opts: OpenStoreOptions): Promise<void> {
  const total = readMigrationFiles(MIGRATION_CONFIG).length;
  expect(total).toBeGreaterThanOrEqual(2);
  const report = await migrateDatabase(opts);
  expect(report).toMatchObject({ applied: total - 1, total });

  const store = await openStore(opts);
  try {
    expect(await store.sessions.get('old-parent')).toMatchObject({
      kind: 'loop',
      profile: 'coder',
      promptTokens: 5_000_000_000,
      completionTokens: 42,
    });
    expect(await store.sessions.get('old-child')).toMatchObject({ parentId: 'old-parent' });
    expect((await store.messages.list('old-parent')).map((m) => [m.seq, m.role])).toEqual([
      [1, 'user'],
      [2, 'assistant'],
    ]);
    expect(await store.context.load('old-parent')).toEqual([
      { role: 'user', content: 'fix the tests' },
      { role: 'assistant', content: '', tool_calls: [{ name: 'shell', arguments: { command: 'npm test' } }] },
    ]);
    expect(await store.state.getTodos('old-parent')).toEqual([{ id: 1, text: 'run tests', status: 'pending' }]);

    // Old sessions work with the new tables and keep their seq counters.
    await store.messages.append('old-parent', { role: 'user', content: 'go on' });
    expect((await store.messages.list('old-parent')).at(-1)?.seq).toBe(3);
    const memory = await store.memories.add('me', 'likes short answers', 'tool', 'old-parent');
    await store.planningLogs.append('old-parent', { phase: 1 });
    await store.archives.compactContext('old-parent', [{ role: 'user', content: 'summary' }], {
      reason: 'manual',
      summary: 'summary',
      messages: [],
      tokensBefore: 10,
      tokensAfter: 2,
    });
    const run = await store.loopRuns.create({ sessionId: 'old-parent', taskName: 't', task: {}, config: {}, cwd: '/work/repo', maxIterations: 3 });
    await store.loopRuns.commitIteration(run.id, {
      iteration: 1,
      phase: 'INIT',
      indicators: {},
      evidence: {},
      stateHash: '9ea082',
      gateDecision: 'continue',
      gateReason: null,
      exitSignal: null,
      statusBlock: 'NAVIGATOR_STATUS',
      decision: null,
      promptTokens: 1,
      completionTokens: 1,
      durationMs: 1,
      startedAt: new Date(),
      finishedAt: new Date(),
    }, { hashHistory: ['9ea082'] });

    expect(await store.sessions.remove('old-parent')).toBe(true);
    expect(await store.sessions.get('old-child')).toBeNull();
    expect(await store.loopRuns.get(run.id)).toBeNull();
    expect(await store.memories.list('me')).toEqual([{ ...memory, sessionId: null }]);
  } finally {
    await store.close();
  }
  expect(await migrateDatabase(opts)).toMatchObject({ applied: 0, total });
}

describe('upgrading a database migrated by an earlier navi', () => {
  it('PGlite: 0000 with rows → the current schema, rows intact', async () => {
    const dataDir = path.join(tempDir('migration-pglite'), 'pgdata');
    const [{ PGlite }, { drizzle }, { migrate }] = await Promise.all([
      import('@electric-sql/pglite'),
      import('drizzle-orm/pglite'),
      import('drizzle-orm/pglite/migrator'),
    ]);
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const client = await PGlite.create(dataDir);
    try {
      const db = drizzle({ client });
      await migrate(db, { ...MIGRATION_CONFIG, migrationsFolder: olderMigrations(1) });
      await client.exec(OLD_ROWS);
    } finally {
      await client.close();
    }
    try {
      await expectUpgraded({ dataDir });
    } finally {
      fs.rmSync(path.dirname(dataDir), { recursive: true, force: true });
    }
    // A hang guard: initdb in WebAssembly takes ~4 s idle and passed 25 s at load 15.
  }, 180_000);

  const adminUrl = process.env.DATABASE_URL;
  it.skipIf(!adminUrl)('PostgreSQL: 0000 with rows → the current schema, rows intact', async () => {
    const name = `navi_test_upgrade_${randomBytes(4).toString('hex')}`;
    const admin = postgres(adminUrl ?? '', { max: 1, onnotice: () => {} });
    const url = new URL(adminUrl ?? '');
    url.pathname = `/${name}`;
    await admin.unsafe(`create database "${name}"`);
    try {
      const [{ drizzle }, { migrate }] = await Promise.all([
        import('drizzle-orm/postgres-js'),
        import('drizzle-orm/postgres-js/migrator'),
      ]);
      const client = postgres(url.toString(), { max: 1, onnotice: () => {} });
      try {
        const db = drizzle({ client });
        await migrate(db, { ...MIGRATION_CONFIG, migrationsFolder: olderMigrations(1) });
        await client.unsafe(OLD_ROWS);
      } finally {
        await client.end({ timeout: 2 });
      }
      await expectUpgraded({ url: url.toString(), dataDir: '/nonexistent' });
    } finally {
      await admin.unsafe(`drop database if exists "${name}" with (force)`);
      await admin.end({ timeout: 2 });
    }
  });
});
