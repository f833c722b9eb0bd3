/**
 * The database failing under a run (issue 5 item 1, SPEC §9): a PostgreSQL server restarted or
 * stopped mid-run (our own throwaway server — never the shared one), a PGlite data directory
 * that cannot be written, and a full disk under PGlite. navi either carries on or exits 1 with
 * one clean line — never a hang, never a stack trace — and what it stored stays consistent.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import type { FakeScript } from '../support/fake-ollama.js';
import {
  FAST_TIMEOUTS,
  LONG_SCENARIO_TIMEOUT_MS,
  OwnPostgres,
  SCENARIO_TIMEOUT_MS,
  canMount,
  databaseAt,
  eventsOf,
  expectCleanExit,
  expectConsistentSession,
  expectFailure,
  expectJsonResult,
  expectValidStream,
  expectWellFormedRequest,
  figuresForTheReport,
  fillDisk,
  readOnlyBind,
  requestMessages,
  resultOf,
  scenario,
  serverBackend,
  tempDir,
  tmpfs,
  until,
  whyNoOwnPostgres,
} from './helpers.js';

/** Tool turns that each take a little model time and store a few rows; then an answer. */
function steadyScript(turns: number, delayMs: number, resultBytes = 0): FakeScript {
  return {
    turns: [
      ...Array.from({ length: turns }, (_, i) => ({
        first_chunk_delay_ms: delayMs,
        tool_calls: [
          resultBytes > 0
            ? { name: 'shell', arguments: { command: `echo step ${i}; head -c ${resultBytes} /dev/urandom | base64 -w 100` } }
            : { name: 'write_file', arguments: { path: `step-${i}.txt`, content: `step ${i}\n` } },
        ],
      })),
      { content: 'All steps done.' },
    ],
    on_exhausted: 'done',
  };
}

const measured = figuresForTheReport();

const noOwnPostgres = whyNoOwnPostgres();
const noMount = canMount() ? undefined : 'mounting needs root with CAP_SYS_ADMIN';

describe.skipIf(noOwnPostgres !== undefined)(`PostgreSQL server restarted or stopped mid-run${noOwnPostgres ? ` (skipped: ${noOwnPostgres})` : ''}`, () => {
  let pg: OwnPostgres | undefined;
  let admin: postgres.Sql | undefined;
  let counter = 0;
  beforeAll(async () => {
    pg = await OwnPostgres.create();
    admin = postgres(pg.url, { max: 1, onnotice: () => {} });
  }, 60_000);
  afterAll(async () => {
    await admin?.end({ timeout: 1 }).catch(() => undefined);
    await pg?.destroy();
  });

  /** A fresh database on our server. */
  async function freshUrl(): Promise<string> {
    const name = `navi_fault_${counter++}`;
    await admin?.unsafe(`create database ${name}`);
    return (pg as OwnPostgres).url.replace(/\/postgres$/, `/${name}`);
  }

  it('restarted while navi waits for the model: the run carries on (reconnect) or exits 1 with one clean line; rows consistent; the session continues', async () => {
    const server = pg as OwnPostgres;
    const s = await scenario(serverBackend(await freshUrl()), {
      turns: [
        { tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'a\n' } }] },
        { tool_calls: [{ name: 'write_file', arguments: { path: 'b.txt', content: 'b\n' } }] },
        // The server restarts during this long prefill; the writes around it meet a new server.
        { first_chunk_delay_ms: 4_000, tool_calls: [{ name: 'write_file', arguments: { path: 'c.txt', content: 'c\n' } }] },
        { content: 'Three files.' },
        { content: 'Continued.' },
      ],
      on_exhausted: 'error',
    });
    const proc = s.start(['run', '-o', 'stream-json', 'three files'], { env: { LLM_STREAM_FIRST_CHUNK_TIMEOUT: '10' }, timeoutMs: 30_000 });
    await proc.waitForEvent('tool_call', (e) => (e.arguments as { path?: string }).path === 'b.txt');
    await until(() => s.chats().length === 3, 30_000, 'the third model request'); // its 4 s prefill has begun
    await server.restart();
    const run = await proc.result;
    measured.push(`PostgreSQL restarted during a model call: exit ${String(run.code)} ${run.stderr.trim()}`);
    expectCleanExit(run, [0, 1]);
    const events = expectValidStream(run);
    const result = resultOf(run);
    if (run.code === 1) {
      expectFailure(run, 1, /database|PostgreSQL/i);
      expect(result).toMatchObject({ status: 'error', reason: 'store_unreachable' });
    } else {
      expect(result).toMatchObject({ status: 'success', result: 'Three files.' });
      expect(eventsOf(events, 'tool_call')).toHaveLength(3);
    }
    const sessionId = String(result.session_id);
    await expectConsistentSession(s.db, sessionId, { pairs: false });
    const next = await s.navi(['run', '-o', 'json', '--session', sessionId, 'go on']);
    expectCleanExit(next, [0]);
    expectWellFormedRequest(requestMessages(s.chats().at(-1)), 'the request after the restart');
    const after = await expectConsistentSession(s.db, sessionId);
    // (Each run's first call's budget note is stored where it was sent: +2.)
    if (run.code === 0) expect(after.messages).toHaveLength(12);
  }, LONG_SCENARIO_TIMEOUT_MS);

  it('stopped mid-run and still down: exit 1 with one line naming the lost connection, promptly; rows consistent once it is back', async () => {
    const server = pg as OwnPostgres;
    const s = await scenario(serverBackend(await freshUrl()), steadyScript(8, 250));
    const proc = s.start(['run', '-o', 'stream-json', 'many steps'], { env: FAST_TIMEOUTS, timeoutMs: 30_000 });
    await proc.waitForEvent('tool_call', (e) => (e.arguments as { path?: string }).path === 'step-1.txt');
    try {
      await server.stop();
      const run = await proc.result;
      measured.push(`PostgreSQL stopped mid-run: exit ${String(run.code)} after ${run.durationMs} ms: ${run.stderr.trim()}`);
      expectFailure(run, 1, /Lost the database connection during [\w.]+: connection (refused|closed by the server)|the server is shutting down or starting up|Cannot reach PostgreSQL at 127\.0\.0\.1:\d+/);
      const events = expectValidStream(run);
      expect(eventsOf(events, 'error')).toEqual([expect.objectContaining({ code: 'store_unreachable' })]);
      // Promptly: a run that waited for the server instead would have hit its hang guard (timedOut).
      expect(resultOf(run)).toMatchObject({ status: 'error', exit_code: 1, reason: 'store_unreachable' });
    } finally {
      await server.start();
    }
    const sessionId = String(proc.events[0]?.session_id);
    const stored = await expectConsistentSession(s.db, sessionId, { pairs: false });
    expect(stored.messages.length).toBeGreaterThanOrEqual(5);
    // Continuing works and the request answers every stored call.
    const next = await s.navi(['run', '-o', 'json', '--session', sessionId, 'go on']);
    expectCleanExit(next, [0]);
    expectWellFormedRequest(requestMessages(s.chats().at(-1)), 'the request after the outage');
    await expectConsistentSession(s.db, sessionId);
  }, LONG_SCENARIO_TIMEOUT_MS);
});

describe.skipIf(noOwnPostgres !== undefined || noMount !== undefined)(
  `PostgreSQL disk full${noOwnPostgres ?? noMount ? ` (skipped: ${String(noOwnPostgres ?? noMount)})` : ''}`,
  () => {
    it('the disk under the server fills up mid-run: exit 1 with one clean line, no hang; rows consistent once there is room', async () => {
      // Our own server with its data directory on a small tmpfs (initdb takes ~40 MB of it).
      const disk = tmpfs('96m');
      execFileSync('chown', ['postgres:postgres', disk]);
      const server = await OwnPostgres.create(disk);
      try {
        const s = await scenario(serverBackend(server.url), steadyScript(30, 20, 24_000));
        const proc = s.start(['run', '-o', 'stream-json', 'fill it up'], { env: FAST_TIMEOUTS, timeoutMs: 30_000 });
        await proc.waitForEvent('tool_call');
        fillDisk(disk);
        const run = await proc.result;
        measured.push(`PostgreSQL disk full: exit ${String(run.code)}: ${run.stderr.trim()}`);
        expectFailure(run, 1, /no space left on device|could not (extend|write)|Lost the database connection/i);
        expectValidStream(run);
        expect(resultOf(run)).toMatchObject({ status: 'error', exit_code: 1 });

        fs.rmSync(path.join(disk, 'filler'));
        await expectConsistentSession(s.db, String(resultOf(run).session_id), { pairs: false });
      } finally {
        // Before the tmpfs under it is unmounted.
        await server.destroy();
      }
    }, LONG_SCENARIO_TIMEOUT_MS);
  },
);

forEachBackend(
  (backend) => {
    describe('PGlite data directory not writable', () => {
      it('its parent is a regular file: exit 1 naming the directory, before any model call', async () => {
        const s = await scenario(backend, { turns: [{ content: 'never' }] });
        const file = path.join(tempDir('notdir'), 'a-file');
        fs.writeFileSync(file, 'not a directory\n');
        const dataDir = path.join(file, 'pgdata');
        const run = await s.navi(['run', '-o', 'json', 'hello'], { env: { NAVI_DATA_DIR: dataDir } });
        expectFailure(run, 1, new RegExp(`Data directory ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not writable \\(a path component is not a directory\\)`));
        expectJsonResult(run, 'error', 'store_dir_not_writable');
        expect(s.chats()).toHaveLength(0);
        const list = await s.navi(['sessions', 'list'], { env: { NAVI_DATA_DIR: dataDir } });
        expectFailure(list, 1, /Data directory .*a-file\/pgdata is not writable/);
      }, SCENARIO_TIMEOUT_MS);

      it.skipIf(noMount !== undefined)(`on a read-only mount (an existing database, and a new one)${noMount ? ` (skipped: ${noMount})` : ''}`, async () => {
        const s = await scenario(backend, { turns: [{ content: 'never' }] });
        // An existing, migrated data directory, mounted read-only (its parent stays writable).
        readOnlyBind(s.db.dataDir);
        const run = await s.navi(['run', '-o', 'json', 'hello']);
        expectFailure(run, 1, new RegExp(`Data directory ${s.db.dataDir} is not writable \\(read-only file system\\)`));
        expectJsonResult(run, 'error', 'store_dir_not_writable');
        // A data directory still to be created under a read-only parent.
        const parent = tempDir('roparent');
        readOnlyBind(parent);
        const fresh = await s.navi(['run', '-o', 'json', 'hello'], { env: { NAVI_DATA_DIR: path.join(parent, 'pgdata') } });
        expectFailure(fresh, 1, new RegExp(`Data directory ${parent}/pgdata is not writable \\(read-only file system\\)`));
        expect(s.chats()).toHaveLength(0);
      }, SCENARIO_TIMEOUT_MS);
    });

    describe('disk full', () => {
      it.skipIf(noMount !== undefined)(`the disk under PGlite fills up mid-run: exit 1 with one clean line, no hang; the database opens and is consistent once there is room${noMount ? ` (skipped: ${noMount})` : ''}`, async () => {
        const s = await scenario(backend, steadyScript(30, 20, 24_000));
        const disk = tmpfs('80m');
        const dataDir = path.join(disk, 'pgdata');
        fs.cpSync(s.db.dataDir, dataDir, { recursive: true });
        const proc = s.start(['run', '-o', 'stream-json', 'fill it up'], { env: { ...FAST_TIMEOUTS, NAVI_DATA_DIR: dataDir }, timeoutMs: 30_000 });
        await proc.waitForEvent('tool_call');
        fillDisk(disk);
        const run = await proc.result;
        measured.push(`PGlite disk full: exit ${String(run.code)}: ${run.stderr.trim()}`);
        expectCleanExit(run, [1]);
        expectFailure(run, 1, /no space left on device|could not (extend|write)/i);
        const events = expectValidStream(run);
        expect(resultOf(run)).toMatchObject({ status: 'error', exit_code: 1 });
        expect(eventsOf(events, 'error')).toHaveLength(1);

        // Room again: the database opens, and the rows that were written are consistent.
        fs.rmSync(path.join(disk, 'filler'));
        const sessionId = String(resultOf(run).session_id);
        await expectConsistentSession(databaseAt({ dataDir }), sessionId, { pairs: false });
      }, LONG_SCENARIO_TIMEOUT_MS);
    });
  },
  // PGlite's own failures: a data directory that cannot be written, a full disk under it.
  { only: 'pglite' },
);
