/**
 * One PGlite directory, several processes (SPEC §9; issue 11, item 6). PGlite itself allows one
 * process per data directory; navi's lock keeps it so, and the process holding the lock serves
 * the database to other navi processes on a Unix socket (src/store/shared-pglite.ts): while a run
 * holds the directory, `sessions list` reads through it and a second run writes through it, and
 * neither disturbs the first. A holder that was killed leaves nothing that stops the next one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { LONG_SCENARIO_TIMEOUT_MS, describeRun, scenario, until } from './helpers.js';

type Sessions = { sessions: Array<{ id: string; title: string }> };

forEachBackend(
  (backend) => {
    describe('one PGlite directory, several processes', () => {
      it('while a run holds the directory, others read and write through it; the first run is undisturbed', async () => {
        // The first run holds the directory while its model prefills (until it is stopped).
        const s = await scenario(backend, {
          turns: [{ first_chunk_delay_ms: 600_000, content: 'first answer' }, { content: 'second answer' }],
        });
        const first = s.start(['run', '-o', 'json', 'first']);
        await until(() => s.chats().length === 1, 30_000, "the first run's chat request");
        const lockFile = path.join(s.db.dataDir, 'navi.lock');
        expect(fs.existsSync(lockFile)).toBe(true);
        await until(() => fs.existsSync(path.join(s.db.dataDir, 'navi.endpoint')), 30_000, 'the holder serving the directory');

        // A reader: the first run's session, through the holder (its row is written while the
        // model prefills: asked again until it is there).
        let listed: Sessions = { sessions: [] };
        for (let tries = 0; listed.sessions.length === 0 && tries < 50; tries++) {
          const list = await s.navi(['sessions', 'list', '-o', 'json']);
          expect(list.code, describeRun(list)).toBe(0);
          listed = JSON.parse(list.stdout) as Sessions;
        }
        expect(listed.sessions.map((x) => x.title)).toEqual(['first']);

        // A second writer: a whole run with its own session, through the holder.
        const second = await s.navi(['run', '-o', 'json', 'second']);
        expect(second.code, describeRun(second)).toBe(0);
        expect(JSON.parse(second.stdout)).toMatchObject({ status: 'success', result: 'second answer' });

        // The first run was not disturbed: stopped now, it saves and releases the directory.
        first.kill('SIGINT');
        const done = await first.result;
        expect(done.code, describeRun(done)).toBe(130);
        expect(JSON.parse(done.stdout)).toMatchObject({ status: 'interrupted' });
        expect(fs.existsSync(lockFile), 'the lock is released at exit').toBe(false);
        expect(fs.readdirSync(s.db.dataDir).filter((f) => f === 'navi.endpoint' || f === 'navi.sock'), 'nothing of the serving is left').toEqual([]);

        const after = await s.navi(['sessions', 'list', '-o', 'json']);
        expect(after.code, describeRun(after)).toBe(0);
        const sessions = (JSON.parse(after.stdout) as Sessions).sessions;
        expect(sessions.map((x) => x.title).sort()).toEqual(['first', 'second']);
        const secondId = String((JSON.parse(second.stdout) as { session_id: string }).session_id);
        const shown = await s.navi(['sessions', 'show', secondId, '-o', 'json']);
        expect(shown.code, describeRun(shown)).toBe(0);
        expect(shown.stdout).toContain('second answer');
      }, LONG_SCENARIO_TIMEOUT_MS);

      it('a holder killed with SIGKILL leaves a stale lock, endpoint and socket: the next run takes the directory over', async () => {
        const s = await scenario(backend, { turns: [{ first_chunk_delay_ms: 600_000, content: 'never' }, { content: 'after the kill' }] });
        const first = s.start(['run', '-o', 'json', 'first']);
        await until(() => s.chats().length === 1, 30_000, "the first run's chat request");
        await until(() => fs.existsSync(path.join(s.db.dataDir, 'navi.endpoint')), 30_000, 'the holder serving the directory');
        first.kill('SIGKILL');
        await first.result;
        expect(fs.existsSync(path.join(s.db.dataDir, 'navi.endpoint'))).toBe(true);

        const next = await s.navi(['run', '-o', 'json', 'next']);
        expect(next.code, describeRun(next)).toBe(0);
        expect(JSON.parse(next.stdout)).toMatchObject({ status: 'success', result: 'after the kill' });
      }, LONG_SCENARIO_TIMEOUT_MS);
    });
  },
  { only: 'pglite' },
);
