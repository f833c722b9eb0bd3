/**
 * `npm run test:stress` (never part of `npm test`): the PGlite directory lock raced the hard way.
 * Several processes wait for the same instant, spin the last milliseconds and go for a stale lock
 * together; the winner holds it a while and releases it, so later rounds also meet a lock freed
 * mid-race. Whatever the timing, a round never has two winners. Each child starts its attempt
 * a seeded random fraction of a millisecond late, so runs explore other interleavings; the seed
 * is printed (`NAVI_TEST_SEED` replays it). The deterministic version is in
 * test/store/lock.unit.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LOCK_FILE_NAME } from '../../src/store/lock.js';
import { seededRandom } from '../support/seeded-random.js';
import { deadPid, runChild, tempDir } from '../store/support.js';

const ROUNDS = Number(process.env.NAVI_STRESS_ROUNDS ?? 20);
const RACERS = Number(process.env.NAVI_STRESS_RACERS ?? 6);

let dir: string;
let lockPath: string;

beforeEach(() => {
  dir = tempDir('lock-stress');
  lockPath = path.join(dir, LOCK_FILE_NAME);
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the PGlite directory lock under a timing-driven race', () => {
  it(`never has two winners in a round (${RACERS} processes, ${ROUNDS} rounds)`, async () => {
    const random = seededRandom('lock-race.stress');
    const start = Date.now() + 3_000;
    const stale = JSON.stringify({ pid: deadPid(), hostname: os.hostname(), started_at: '2000-01-01T00:00:00.000Z' });
    // Children sleep until just before each start and spin only the last few milliseconds.
    const racer = (offsetsUs: number[]): string => `
      import fs from 'node:fs';
      import { acquireDirLock } from './src/store/lock.ts';
      const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
      const offsets = ${JSON.stringify(offsetsUs)};
      const out = [];
      for (let round = 0; round < ${ROUNDS}; round++) {
        const go = ${start} + round * 500;
        await sleep(go - Date.now() - 15);
        while (Date.now() < go) {}
        const until = process.hrtime.bigint() + BigInt(offsets[round] * 1000);
        while (process.hrtime.bigint() < until) {}
        // A child the scheduler kept away past the start could find the lock already released.
        if (Date.now() > go + 100) { out.push('late'); continue; }
        try {
          const lock = acquireDirLock(${JSON.stringify(dir)});
          // Taken at or after the winner's release time: maybe a legitimate second owner.
          if (Date.now() >= go + 300) { lock.release(); out.push('late'); continue; }
          out.push('acquired');
          await sleep(go + 300 - Date.now());
          lock.release();
          if (round % 2 === 0) fs.writeFileSync(${JSON.stringify(lockPath)}, ${JSON.stringify(stale)});
        } catch (e) {
          out.push(e.code);
        }
      }
      console.log(JSON.stringify(out));
    `;
    fs.writeFileSync(lockPath, stale);
    const sources = Array.from({ length: RACERS }, () => racer(Array.from({ length: ROUNDS }, () => random.int(0, 1000))));
    const results = await Promise.all(sources.map((source) => runChild(source, ROUNDS * 500 + 60_000)));
    const perChild = results.map((r) => {
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout.trim()) as string[];
    });
    let decided = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const outcomes = perChild.map((child) => child[round]).filter((o) => o !== 'late');
      const winners = outcomes.filter((o) => o === 'acquired').length;
      expect(winners, `seed ${random.seed}, round ${round}: ${outcomes.join(' ')}`).toBeLessThanOrEqual(1);
      expect(outcomes.filter((o) => o !== 'acquired' && o !== 'store_locked'), `seed ${random.seed}, round ${round}`).toEqual([]);
      if (winners === 1 && outcomes.length > 1) decided++;
    }
    // How many rounds really were a race (several processes in time, one winner): a figure, not a bound.
    process.stderr.write(`[stress] lock race: ${decided} of ${ROUNDS} rounds contested and decided\n`);
  }, 600_000);
});
