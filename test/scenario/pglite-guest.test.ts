/**
 * Issue 18, items 1, 2 and 13: guests of a PGlite directory (navi processes that reach it through
 * the holder's socket, src/store/shared-pglite.ts) go on when the holder leaves; a navi started
 * while the holder still opens the database waits for it; a data directory that is someone's
 * project folder is refused untouched. Real processes; each model answers when the test releases
 * it (`holdChats`), so the order of events is the one the user hit, without timing.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { onTestFinished, describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { fakeOllama } from '../support/fake-ollama-harness.js';
import type { FakeOllama } from '../support/fake-ollama.js';
import { MEMORY_CACHE_FILE } from '../../src/cli/memory-cache.js';
import { LONG_SCENARIO_TIMEOUT_MS, SCENARIO_TIMEOUT_MS, describeRun, scenario, tempDir, until } from './helpers.js';

type Sessions = { sessions: Array<{ id: string; title: string }> };

const chatsOf = (fake: FakeOllama): number => fake.requests.filter((r) => r.path === '/api/chat').length;

forEachBackend(
  (backend) => {
    describe('a guest outlives the holder of its PGlite directory (item 1)', () => {
      it('run A holds, run B joins as a guest, A finishes first: B stores its answer and exits 0', async () => {
        const s = await scenario(backend, { turns: [{ content: 'answer of A' }] });
        const releaseA = s.fake.holdChats();
        const fakeB = await fakeOllama({ turns: [{ content: 'answer of B' }] });
        const releaseB = fakeB.holdChats();
        const a = s.start(['run', '-o', 'json', 'first']);
        await until(() => s.chats().length === 1, 30_000, "A's chat request");
        await until(() => fs.existsSync(path.join(s.db.dataDir, 'navi.endpoint')), 30_000, 'A serving the directory');
        // B reads the user's memories from the store before its first model call when there is no
        // memory cache (A wrote one): with it gone, B's chat request means B is connected as a guest.
        fs.rmSync(path.join(s.db.dataDir, MEMORY_CACHE_FILE), { force: true });
        const b = s.start(['--ollama-host', fakeB.url, 'run', '-o', 'json', 'second'], { host: false });
        await until(() => chatsOf(fakeB) === 1, 30_000, "B's chat request");

        releaseA();
        const doneA = await a.result;
        expect(doneA.code, describeRun(doneA)).toBe(0);
        expect(fs.existsSync(path.join(s.db.dataDir, 'navi.endpoint')), 'A withdrew its socket').toBe(false);

        releaseB();
        const doneB = await b.result;
        expect(doneB.code, describeRun(doneB)).toBe(0);
        expect(JSON.parse(doneB.stdout)).toMatchObject({ status: 'success', result: 'answer of B' });
        const sessionB = String((JSON.parse(doneB.stdout) as { session_id: string }).session_id);
        await s.db.withStore(async (store) => {
          expect((await store.sessions.list()).map((x) => x.title).sort()).toEqual(['first', 'second']);
          // The prompt, the first call's budget note (stored where it was sent), the answer: once each.
          expect((await store.messages.list(sessionB)).map((m) => m.content)).toEqual(['second', expect.stringContaining('[Iteration 1 of'), 'answer of B']);
        });
      }, LONG_SCENARIO_TIMEOUT_MS);

      it('a guest that outlived one holder becomes the holder, and serves the next guest', async () => {
        const s = await scenario(backend, { turns: [{ content: 'answer of A' }] });
        const releaseA = s.fake.holdChats();
        const fakeB = await fakeOllama({ turns: [{ content: 'answer of B' }] });
        const releaseB = fakeB.holdChats();
        const a = s.start(['run', '-o', 'json', 'first']);
        await until(() => fs.existsSync(path.join(s.db.dataDir, 'navi.endpoint')), 30_000, 'A serving the directory');
        fs.rmSync(path.join(s.db.dataDir, MEMORY_CACHE_FILE), { force: true });
        const b = s.start(['--ollama-host', fakeB.url, 'run', '-o', 'json', 'second'], { host: false });
        await until(() => chatsOf(fakeB) === 1, 30_000, "B's chat request");
        releaseA();
        expect((await a.result).code).toBe(0);

        // B is idle (its model prefills); a reader started now finds the directory held by A no
        // more. Whoever holds it, the listing works; once B took over, it lists through B.
        releaseB();
        const doneB = await b.result;
        expect(doneB.code, describeRun(doneB)).toBe(0);
        const list = await s.navi(['sessions', 'list', '-o', 'json']);
        expect(list.code, describeRun(list)).toBe(0);
        expect((JSON.parse(list.stdout) as Sessions).sessions.map((x) => x.title).sort()).toEqual(['first', 'second']);
        expect(fs.existsSync(path.join(s.db.dataDir, 'navi.lock')), 'B released the lock it took over').toBe(false);
      }, LONG_SCENARIO_TIMEOUT_MS);
    });

    describe('a navi started while the holder opens the database (item 2)', () => {
      it('waits for the holder instead of failing with store_locked', async () => {
        const s = await scenario(backend, { turns: [{ content: 'after the wait' }] });
        // The holder has taken the lock and is still opening PGlite (no socket yet): its lock
        // file is fresh and keeps being touched, as navi's holder does while it opens.
        const lockFile = path.join(s.db.dataDir, 'navi.lock');
        fs.writeFileSync(lockFile, JSON.stringify({ pid: process.pid, hostname: os.hostname(), started_at: new Date().toISOString() }));
        const beat = setInterval(() => {
          const now = new Date();
          fs.utimesSync(lockFile, now, now);
        }, 100);
        onTestFinished(() => clearInterval(beat));
        fs.rmSync(path.join(s.db.dataDir, MEMORY_CACHE_FILE), { force: true });
        const run = s.start(['run', '-o', 'json', 'started together']);
        // It asked the model about itself: the store was opened (and found locked) before that.
        await until(() => s.fake.requests.some((r) => r.path === '/api/show'), 30_000, "the second navi's model-info request");
        expect(s.chats(), 'no model call before the store is open').toHaveLength(0);
        // The holder gives the directory up (it failed to open, or finished): the waiter holds it.
        clearInterval(beat);
        fs.rmSync(lockFile);
        const done = await run.result;
        expect(done.code, describeRun(done)).toBe(0);
        expect(JSON.parse(done.stdout)).toMatchObject({ status: 'success', result: 'after the wait' });
      }, SCENARIO_TIMEOUT_MS);

      it('two runs started together on a new directory both succeed', async () => {
        const s = await scenario(backend, { turns: [{ content: 'one' }, { content: 'two' }] });
        const dataDir = path.join(tempDir('together'), 'pgdata');
        const env = { NAVI_DATA_DIR: dataDir };
        const [x, y] = await Promise.all([s.navi(['run', '-o', 'json', 'x'], { env }), s.navi(['run', '-o', 'json', 'y'], { env })]);
        expect(x.code, describeRun(x)).toBe(0);
        expect(y.code, describeRun(y)).toBe(0);
        const list = await s.navi(['sessions', 'list', '-o', 'json'], { env });
        expect((JSON.parse(list.stdout) as Sessions).sessions.map((r) => r.title).sort()).toEqual(['x', 'y']);
      }, SCENARIO_TIMEOUT_MS);

      it('a holder that does not serve the directory: store_locked says what is true and safe', async () => {
        const s = await scenario(backend, { turns: [{ content: 'never' }] });
        const lockFile = path.join(s.db.dataDir, 'navi.lock');
        // A live process holds the lock and its heartbeat is old: it is not opening, it does not share.
        fs.writeFileSync(lockFile, JSON.stringify({ pid: process.pid, hostname: os.hostname(), started_at: new Date().toISOString() }));
        const old = new Date(Date.now() - 60_000);
        fs.utimesSync(lockFile, old, old);
        // Spawned: the lock names this test's process as the holder, which a navi in it would be.
        const run = await s.navi(['sessions', 'list'], { spawn: true });
        expect(run.code, describeRun(run)).toBe(1);
        expect(run.stderr).toContain(`process ${process.pid} on ${os.hostname()}`);
        expect(run.stderr).toContain('does not serve it to other navi processes');
        expect(run.stderr).toContain('never delete it while that process runs');
        expect(run.stderr).not.toContain('allows one navi process at a time');
        expect(run.stderr).not.toMatch(/If that process is gone, delete the lock file/);
      }, SCENARIO_TIMEOUT_MS);
    });

    describe('a data directory that is not navi\'s (item 13)', () => {
      it('NAVI_DATA_DIR=. in a project: exit 2, nothing written, mode unchanged', async () => {
        const s = await scenario(backend, { turns: [{ content: 'never' }] });
        const project = tempDir('project');
        fs.writeFileSync(path.join(project, 'package.json'), '{}\n');
        fs.mkdirSync(path.join(project, 'src'));
        fs.chmodSync(project, 0o755);
        const run = await s.navi(['run', 'hello'], { env: { NAVI_DATA_DIR: '.' }, cwd: project });
        expect(run.code, describeRun(run)).toBe(2);
        expect(run.stderr).toContain(`${fs.realpathSync(project)} is not a navi data directory`);
        expect(run.stderr).not.toMatch(/\n\s+at /);
        expect(fs.readdirSync(project).sort()).toEqual(['package.json', 'src']);
        expect(fs.statSync(project).mode & 0o777).toBe(0o755);
        expect(s.chats()).toHaveLength(0);
      }, SCENARIO_TIMEOUT_MS);
    });
  },
  { only: 'pglite' },
);
