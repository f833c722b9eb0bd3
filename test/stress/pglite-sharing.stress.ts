/**
 * `npm run test:stress` (never part of `npm test`): one PGlite directory shared by N navi
 * processes started together (issue 18, items 1 and 2), while whoever holds the directory is
 * killed with SIGKILL at random moments. The fake Ollama answers each call after a seeded random
 * delay, some with a tool call first, so holders come and go while guests wait on their model,
 * write, or open. Nothing may be lost to the sharing: every run that was not killed exits 0 with
 * its session stored once — its prompt and its answer each exactly once. Runs that were killed
 * leave at most one session. The seed is printed (`NAVI_TEST_SEED` replays it); the scenario
 * tests in test/scenario/pglite-guest.test.ts are the deterministic versions.
 */
import path from 'node:path';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, makeTempDir, startNavi, type NaviProcess, type NaviResult } from '../support/cli.js';
import { fakeOllamaForFile } from '../support/fake-ollama-harness.js';
import type { FakeTurn } from '../support/fake-ollama.js';
import { seededRandom } from '../support/seeded-random.js';
import { openStore } from '../../src/store/open.js';
import { LOCK_FILE_NAME } from '../../src/store/lock.js';

const ROUNDS = Number(process.env.NAVI_STRESS_ROUNDS ?? 3);
const PROCESSES = Number(process.env.NAVI_STRESS_PROCESSES ?? 6);
/** Holders killed per round at most: the rest must finish. */
const KILLS = Number(process.env.NAVI_STRESS_KILLS ?? 2);

let root: string;
const fake = fakeOllamaForFile({ turns: [] });

beforeAll(() => {
  root = makeTempDir('sharing-stress');
});
afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

type Outcome = { title: string; killed: boolean; result: NaviResult };

function holderPid(dataDir: string): number | null {
  try {
    return (JSON.parse(fs.readFileSync(path.join(dataDir, LOCK_FILE_NAME), 'utf8')) as { pid: number }).pid;
  } catch {
    return null;
  }
}

describe('one PGlite directory, N processes started together, holders killed at random', () => {
  it(`loses nothing (${ROUNDS} rounds of ${PROCESSES} processes, up to ${KILLS} holders killed each)`, async () => {
    const random = seededRandom('pglite-sharing.stress');
    const dataDir = path.join(root, 'pgdata');
    const cwd = makeTempDir('sharing-stress-cwd');
    const env = cleanEnv({ NAVI_DATA_DIR: dataDir });
    const outcomes: Outcome[] = [];

    for (let round = 0; round < ROUNDS; round++) {
      // Answers after 0.2–3 s; one call in three is a tool call first (more writes, longer runs).
      const turns: FakeTurn[] = [];
      for (let i = 0; i < PROCESSES * 2; i++) {
        const delay = random.int(200, 3_000);
        turns.push(random.next() < 0.33 ? { first_chunk_delay_ms: delay, tool_calls: [{ name: 'list_dir', arguments: {} }] } : { first_chunk_delay_ms: delay, content: `answer ${round}.${i}` });
      }
      fake.setScript({ turns });
      const children = new Map<number, { title: string; child: NaviProcess; done: boolean }>();
      for (let i = 0; i < PROCESSES; i++) {
        const title = `prompt ${round}.${i}`;
        const child = startNavi(['--ollama-host', fake.url, 'run', '-o', 'json', title], { cwd, env, timeoutMs: 240_000 });
        const entry = { title, child, done: false };
        void child.result.then(() => (entry.done = true));
        children.set(child.child.pid!, entry);
      }
      const killed = new Set<number>();
      // The killer: at random moments, SIGKILL whichever of this round's processes holds the directory.
      const killer = (async () => {
        while (killed.size < KILLS && [...children.values()].some((c) => !c.done)) {
          await new Promise((resolve) => setTimeout(resolve, random.int(300, 2_500)));
          const pid = holderPid(dataDir);
          const victim = pid === null ? undefined : children.get(pid);
          if (victim !== undefined && !victim.done) {
            killed.add(pid!);
            victim.child.child.kill('SIGKILL');
          }
        }
      })();
      const results = await Promise.all([...children.values()].map(async (c) => ({ pid: c.child.child.pid!, title: c.title, result: await c.child.result })));
      await killer;
      for (const r of results) outcomes.push({ title: r.title, killed: killed.has(r.pid), result: r.result });
      process.stderr.write(`[stress] seed ${random.seed} round ${round}: killed ${killed.size} holder(s)\n`);
    }

    const store = await openStore({ dataDir });
    try {
      const sessions = await store.sessions.list({ limit: 10_000 });
      for (const o of outcomes) {
        const mine = sessions.filter((s) => s.title === o.title);
        const where = `seed ${random.seed}, ${o.title}${o.killed ? ' (killed)' : ''}: exit ${o.result.code}\n${o.result.stderr}`;
        expect(mine.length, `at most one session: ${where}`).toBeLessThanOrEqual(1);
        if (o.killed) continue;
        expect(o.result.code, where).toBe(0);
        const answer = JSON.parse(o.result.stdout) as { session_id: string; result: string };
        expect(mine.map((s) => s.id), where).toEqual([answer.session_id]);
        const messages = await store.messages.list(answer.session_id);
        expect(messages.filter((m) => m.role === 'user' && m.content === o.title).length, `prompt stored once: ${where}`).toBe(1);
        expect(messages.filter((m) => m.role === 'assistant' && m.content === answer.result).length, `answer stored once: ${where}`).toBe(1);
      }
    } finally {
      await store.close();
    }
  }, 1_200_000);
});
