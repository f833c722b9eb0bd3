/**
 * The lock's heartbeat (issue 18, item 2): while the holder opens the database (no socket yet)
 * it touches its lock file, and a navi started at the same moment waits for the socket while the
 * lock is fresh instead of failing with `store_locked`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LOCK_FILE_NAME, acquireDirLock, lockHeartbeatFresh, lockInFlux, startLockHeartbeat } from '../../src/store/lock.js';
import { tempDir } from './support.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('lock heartbeat', () => {
  it('a new lock is fresh; an old one is not; the heartbeat makes it fresh again, until stopped', async () => {
    const dir = tempDir('heartbeat');
    dirs.push(dir);
    expect(lockHeartbeatFresh(dir), 'no lock at all').toBe(false);
    const lock = acquireDirLock(dir);
    const file = path.join(dir, LOCK_FILE_NAME);
    expect(lockHeartbeatFresh(dir)).toBe(true);
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(file, old, old);
    expect(lockHeartbeatFresh(dir)).toBe(false);
    const beat = startLockHeartbeat(lock);
    await expect.poll(() => lockHeartbeatFresh(dir), { timeout: 30_000 }).toBe(true);
    beat.stop();
    fs.utimesSync(file, old, old);
    expect(lockHeartbeatFresh(dir)).toBe(false);
    lock.release();
    expect(lockHeartbeatFresh(dir)).toBe(false);
  });

  it('lockInFlux: worth waiting for while fresh, released, or a stale lock is being taken over', () => {
    const dir = tempDir('flux');
    dirs.push(dir);
    const file = path.join(dir, LOCK_FILE_NAME);
    expect(lockInFlux(dir), 'released').toBe(true);
    fs.writeFileSync(file, '{}');
    expect(lockInFlux(dir), 'just taken').toBe(true);
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(file, old, old);
    expect(lockInFlux(dir), 'held, silent: a holder that does not serve').toBe(false);
    fs.writeFileSync(`${file}.takeover`, '{}');
    expect(lockInFlux(dir), 'a takeover under way').toBe(true);
  });
});
