/**
 * SPEC §9: PGlite allows one process per data directory. A second navi on a busy directory gets
 * a clear error naming the lock (exit 1) instead of corrupting it, and the first run goes on.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { LONG_SCENARIO_TIMEOUT_MS, describeRun, expectFailure, scenario, until } from './helpers.js';

forEachBackend(
  (backend) => {
    describe('one PGlite directory, two processes', () => {
      it('a second navi exits 1 with a message naming the lock; the first is unaffected', async () => {
        // The first run holds the directory while its model prefills (until it is stopped).
        const s = await scenario(backend, {
          turns: [{ first_chunk_delay_ms: 600_000, content: 'first answer' }, { content: 'second answer' }],
        });
        const first = s.start(['run', '-o', 'json', 'first']);
        await until(() => s.chats().length === 1, 30_000, "the first run's chat request");
        const lockFile = path.join(s.db.dataDir, 'navi.lock');
        expect(fs.existsSync(lockFile)).toBe(true);

        const second = await s.navi(['run', '-o', 'json', 'second']);
        expectFailure(second, 1, new RegExp(`in use by process ${first.child.pid ?? 0} .*lock file ${lockFile}.*DATABASE_URL`));
        expect(JSON.parse(second.stdout)).toMatchObject({ type: 'result', status: 'error', reason: 'store_locked', exit_code: 1 });
        // A locked-out run should fail before it spends a (possibly long) model call.
        const secondCalls = s.chats().filter((r) => JSON.stringify(r.body).includes('"second"')).length;
        expect(secondCalls, 'chat requests made by the locked-out run').toBe(0);

        const list = await s.navi(['sessions', 'list']);
        expectFailure(list, 1, /navi\.lock/);

        // The first run was not disturbed: stopped now, it saves and releases the lock.
        first.kill('SIGINT');
        const done = await first.result;
        expect(done.code, describeRun(done)).toBe(130);
        expect(JSON.parse(done.stdout)).toMatchObject({ status: 'interrupted' });
        expect(fs.existsSync(lockFile), 'the lock is released at exit').toBe(false);
        const after = await s.navi(['sessions', 'list', '-o', 'json']);
        expect(after.code, describeRun(after)).toBe(0);
        expect((JSON.parse(after.stdout) as { sessions: Array<{ title: string }> }).sessions.map((x) => x.title)).toEqual(['first']);
      }, LONG_SCENARIO_TIMEOUT_MS);
    });
  },
  { only: 'pglite' },
);
