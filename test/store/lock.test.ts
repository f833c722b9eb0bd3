/**
 * The PGlite directory lock on its own (no database): who may take it, when a lock is stale, and
 * that it never deletes a lock it does not own.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StorageError } from '../../src/errors.js';
import { LOCK_FILE_NAME, acquireDirLock, type DirLock } from '../../src/store/lock.js';
import { deadPid, runChild, tempDir } from './support.js';

let dir: string;
let lockPath: string;
const held: DirLock[] = [];

beforeEach(() => {
  dir = tempDir('lock');
  lockPath = path.join(dir, LOCK_FILE_NAME);
});

afterEach(() => {
  for (const lock of held.splice(0)) lock.release();
  fs.rmSync(dir, { recursive: true, force: true });
});

function take(): DirLock {
  const lock = acquireDirLock(dir);
  held.push(lock);
  return lock;
}

function writeLock(owner: object): void {
  fs.writeFileSync(lockPath, JSON.stringify(owner));
}

function lockError(): StorageError {
  try {
    take();
  } catch (err) {
    if (err instanceof StorageError) return err;
    throw err;
  }
  throw new Error('expected the lock to be refused');
}

describe('acquireDirLock', () => {
  it('writes pid, hostname and start time, and removes the file on release', () => {
    const lock = take();
    expect(lock.path).toBe(lockPath);
    const owner = JSON.parse(fs.readFileSync(lockPath, 'utf8')) as Record<string, unknown>;
    expect(owner).toEqual({ pid: process.pid, hostname: os.hostname(), started_at: expect.any(String) as string });
    expect(Number.isNaN(Date.parse(owner.started_at as string))).toBe(false);
    expect(fs.statSync(lockPath).mode & 0o777).toBe(0o600);
    lock.release();
    lock.release();
    expect(fs.existsSync(lockPath)).toBe(false);
    take(); // free again
  });

  it('refuses a second lock in the same process', () => {
    take();
    const err = lockError();
    expect(err.code).toBe('store_locked');
    expect(err.message).toContain(lockPath);
    expect(err.message).toContain(`process ${process.pid}`);
  });

  it('refuses a second lock on the same directory reached through a symlink', () => {
    take();
    const link = `${dir}-link`;
    fs.symlinkSync(dir, link);
    try {
      expect(() => acquireDirLock(link)).toThrow(StorageError);
    } finally {
      fs.unlinkSync(link);
    }
  });

  it('refuses a lock held by another live process, naming it', async () => {
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => sleeper.once('spawn', resolve));
      writeLock({ pid: sleeper.pid, hostname: os.hostname(), started_at: new Date().toISOString() });
      const err = lockError();
      expect(err.code).toBe('store_locked');
      expect(err.message).toContain(`process ${sleeper.pid} on ${os.hostname()}`);
      expect(err.message).toContain('DATABASE_URL');
      expect(fs.existsSync(lockPath)).toBe(true);
    } finally {
      sleeper.kill('SIGKILL');
    }
  });

  it('takes over a lock whose process is dead', () => {
    writeLock({ pid: deadPid(), hostname: os.hostname(), started_at: new Date().toISOString() });
    take();
    expect(JSON.parse(fs.readFileSync(lockPath, 'utf8'))).toMatchObject({ pid: process.pid });
    // Nothing is left beside the lock.
    expect(fs.readdirSync(dir)).toEqual([LOCK_FILE_NAME]);
  });

  it('takes over a lock that carries our pid but is not held here (restarted container)', () => {
    writeLock({ pid: process.pid, hostname: os.hostname(), started_at: '2020-01-01T00:00:00.000Z' });
    take();
    expect(fs.readdirSync(dir)).toEqual([LOCK_FILE_NAME]);
  });

  it.skipIf(process.platform !== 'linux')('takes over a lock whose pid was recycled by a newer process', () => {
    // Our parent process is alive but started long after this (backdated) lock was taken.
    writeLock({ pid: process.ppid, hostname: os.hostname(), started_at: '2000-01-01T00:00:00.000Z' });
    take();
    expect(JSON.parse(fs.readFileSync(lockPath, 'utf8'))).toMatchObject({ pid: process.pid });
  });

  it('treats a lock from another host as held', () => {
    writeLock({ pid: 4242, hostname: 'some-other-host', started_at: new Date().toISOString() });
    expect(lockError().message).toContain('process 4242 on some-other-host');
  });

  it('treats a fresh unreadable lock as being written, and an old one as debris', () => {
    fs.writeFileSync(lockPath, '');
    expect(lockError().code).toBe('store_locked');
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(lockPath, old, old);
    take();
    expect(JSON.parse(fs.readFileSync(lockPath, 'utf8'))).toMatchObject({ pid: process.pid });
  });

  it('does not delete a lock that another process took over meanwhile', () => {
    const lock = take();
    const other = { pid: 4242, hostname: 'other', started_at: new Date().toISOString() };
    writeLock(other);
    lock.release();
    expect(JSON.parse(fs.readFileSync(lockPath, 'utf8'))).toEqual(other);
  });

  it('an unwritable directory is an error, not a lock', () => {
    const file = path.join(dir, 'file');
    fs.writeFileSync(file, '');
    expect(() => acquireDirLock(path.join(file, 'sub'))).toThrow(/ENOTDIR|ENOENT/);
  });

  it('is released when the process exits without closing', async () => {
    const child = await runChild(`
      import fs from 'node:fs';
      import { acquireDirLock } from './src/store/lock.ts';
      acquireDirLock(${JSON.stringify(dir)});
      console.log(fs.existsSync(${JSON.stringify(lockPath)}));
      process.exit(0);
    `);
    expect(child.stdout.trim()).toBe('true');
    expect(fs.existsSync(lockPath)).toBe(false);
  });

  it('clears a takeover file left by a dead process, and refuses while a live one is taking over', async () => {
    writeLock({ pid: deadPid(), hostname: os.hostname(), started_at: new Date().toISOString() });
    const takeover = `${lockPath}.takeover`;
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => sleeper.once('spawn', resolve));
      fs.writeFileSync(takeover, JSON.stringify({ pid: sleeper.pid, hostname: os.hostname(), started_at: new Date().toISOString() }));
      expect(lockError().code).toBe('store_locked');
      expect(fs.existsSync(lockPath)).toBe(true);
    } finally {
      sleeper.kill('SIGKILL');
    }
    fs.writeFileSync(takeover, JSON.stringify({ pid: deadPid(), hostname: os.hostname(), started_at: new Date().toISOString() }));
    take();
    expect(fs.readdirSync(dir)).toEqual([LOCK_FILE_NAME]);
  });

  it('only one of several processes racing for a stale lock gets it, round after round', async () => {
    // Each child races ROUNDS times: all wait for the same instant, go for the lock together, the
    // winner holds it past the others' attempts, then releases it as a dead process would not:
    // the next round starts again from a stale lock. Any round with two winners fails.
    const rounds = 6;
    const racers = 5;
    const start = Date.now() + 3_000;
    // Children sleep until just before each start and spin only the last few milliseconds: six
    // processes spinning for seconds would starve the rest of a parallel test run.
    const racer = `
      import fs from 'node:fs';
      import { acquireDirLock } from './src/store/lock.ts';
      const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
      const out = [];
      for (let round = 0; round < ${rounds}; round++) {
        const go = ${start} + round * 500;
        await sleep(go - Date.now() - 15);
        while (Date.now() < go) {}
        // A child the scheduler kept away past the start could find the lock already released:
        // such a round proves nothing for it.
        if (Date.now() > go + 100) { out.push('late'); continue; }
        try {
          const lock = acquireDirLock(${JSON.stringify(dir)});
          out.push('acquired');
          await sleep(go + 300 - Date.now());
          lock.release();
          if (round % 2 === 0) fs.writeFileSync(${JSON.stringify(lockPath)}, ${JSON.stringify(
            JSON.stringify({ pid: deadPid(), hostname: os.hostname(), started_at: new Date().toISOString() }),
          )});
        } catch (e) {
          out.push(e.code);
        }
      }
      console.log(JSON.stringify(out));
    `;
    writeLock({ pid: deadPid(), hostname: os.hostname(), started_at: new Date().toISOString() });
    const results = await Promise.all(Array.from({ length: racers }, () => runChild(racer)));
    const perChild = results.map((r) => JSON.parse(r.stdout.trim()) as string[]);
    let decided = 0;
    for (let round = 0; round < rounds; round++) {
      const outcomes = perChild.map((child) => child[round]).filter((o) => o !== 'late');
      const winners = outcomes.filter((o) => o === 'acquired').length;
      // Never two; none only if the last winner was held up past its release time (heavy load).
      expect(winners, `round ${round}: ${outcomes.join(' ')}`).toBeLessThanOrEqual(1);
      expect(outcomes.filter((o) => o !== 'acquired' && o !== 'store_locked'), `round ${round}`).toEqual([]);
      if (winners === 1 && outcomes.length > 1) decided++;
    }
    expect(decided, 'rounds where several processes raced and one won').toBeGreaterThanOrEqual(rounds / 2);
  });
});
