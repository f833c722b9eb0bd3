/**
 * Issue 18, item 1, for a loop: a `navi loop` that joined a PGlite directory as a guest (another
 * navi held it) went on working after that holder finished — and died at its next write, its run
 * left `running`. Now it takes the directory over and completes; its iterations are all stored.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { fakeOllama } from '../support/fake-ollama-harness.js';
import { MEMORY_CACHE_FILE } from '../../src/cli/memory-cache.js';
import { tempDir, until } from '../scenario/helpers.js';
import { describeRun, expectExit, fixIteration, lookIteration, loopRepo, scenario, script } from './helpers.js';

forEachBackend(
  (backend) => {
    describe('a loop that is a guest of the PGlite directory', () => {
      it('outlives the run that held the directory: completes, every iteration stored', async () => {
        const s = await scenario(backend, script(lookIteration(), fixIteration()));
        loopRepo(s.cwd);
        const fakeA = await fakeOllama({ turns: [{ content: 'answer of A' }] });
        const releaseA = fakeA.holdChats();
        const a = s.start(['--ollama-host', fakeA.url, 'run', '-o', 'json', 'holder'], { host: false, cwd: tempDir('holder') });
        await until(() => fakeA.requests.some((r) => r.path === '/api/chat'), 30_000, "the holder's chat request");
        await until(() => fs.existsSync(path.join(s.db.dataDir, 'navi.endpoint')), 30_000, 'the holder serving the directory');
        // Without a memory cache the loop reads the store before its first model call: its chat
        // request then means it is connected through the holder.
        fs.rmSync(path.join(s.db.dataDir, MEMORY_CACHE_FILE), { force: true });
        const releaseLoop = s.fake.holdChats();
        const loop = s.start(['loop', 'task.yaml', '-o', 'json']);
        await until(() => s.chats().length === 1, 30_000, "the loop's first chat request");

        releaseA();
        const doneA = await a.result;
        expect(doneA.code, describeRun(doneA)).toBe(0);
        releaseLoop();
        const done = await loop.result;
        expectExit(done, 0);
        const runId = String((JSON.parse(done.stdout) as { run_id: string }).run_id);
        await s.db.withStore(async (store) => {
          expect(await store.loopRuns.get(runId)).toMatchObject({ status: 'completed', iteration: 2 });
          expect((await store.loopRuns.listIterations(runId)).map((i) => i.iteration)).toEqual([1, 2]);
        });
      }, 120_000);
    });
  },
  { only: 'pglite' },
);
