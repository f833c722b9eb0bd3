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
import { REPO_ROOT, deadPid, runChild, tempDir } from './support.js';

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

/** A child process that takes the lock on `go` and releases it on `release`, answering with one line each. */
interface Racer {
  send(command: 'go' | 'release'): void;
  /** The next line it prints (a hang guard far above its real time fails the test). */
  line(): Promise<string>;
  stop(): void;
}

async function startRacer(lockDir: string): Promise<Racer> {
  const source = `
    import readline from 'node:readline';
    import { acquireDirLock } from './src/store/lock.ts';
    let lock = null;
    console.log('ready');
    for await (const line of readline.createInterface({ input: process.stdin })) {
      if (line === 'go') {
        try {
          lock = acquireDirLock(${JSON.stringify(lockDir)});
          console.log('acquired');
        } catch (e) {
          console.log(e.code ?? String(e));
        }
      } else if (line === 'release') {
        lock?.release();
        lock = null;
        console.log('released');
      }
    }
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', source], {
    cwd: REPO_ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiting: Array<(line: string) => void> = [];
  let stderr = '';
  let pending = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    for (const line of parts) {
      const waiter = waiting.shift();
      if (waiter) waiter(line);
      else lines.push(line);
    }
  });
  const line = (): Promise<string> => {
    const ready = lines.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    return new Promise((resolve, reject) => {
      const guard = setTimeout(() => reject(new Error(`racer ${child.pid} printed nothing for 30 s; stderr: ${stderr}`)), 30_000);
      waiting.push((l) => {
        clearTimeout(guard);
        resolve(l);
      });
    });
  };
  const racer: Racer = {
    send: (command) => child.stdin.write(`${command}\n`),
    line,
    stop: () => {
      child.stdin.end();
      child.kill('SIGKILL');
    },
  };
  const first = await line();
  if (first !== 'ready') throw new Error(`racer did not start: ${first}; stderr: ${stderr}`);
  return racer;
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
    // No clock decides anything here: each round starts from a stale lock (a dead owner's, or an
    // old unreadable file), every racer is told "go" at once and tries once, and the winner holds
    // the lock until all have answered — so exactly one winner is the outcome of every
    // interleaving. The heavier, timing-driven race (more processes, releases mid-race) is
    // `npm run test:stress`.
    const rounds = 4;
    const racers = await Promise.all(Array.from({ length: 3 }, () => startRacer(dir)));
    try {
      for (let round = 0; round < rounds; round++) {
        if (round % 2 === 0) {
          // Backdated: should the dead pid be recycled meanwhile, the lock is still stale.
          writeLock({ pid: deadPid(), hostname: os.hostname(), started_at: '2000-01-01T00:00:00.000Z' });
        } else {
          fs.writeFileSync(lockPath, '');
          const old = new Date(Date.now() - 60_000);
          fs.utimesSync(lockPath, old, old);
        }
        for (const racer of racers) racer.send('go');
        const outcomes = await Promise.all(racers.map((racer) => racer.line()));
        expect(outcomes.filter((o) => o === 'acquired'), `round ${round}: ${outcomes.join(' ')}`).toEqual(['acquired']);
        expect(outcomes.filter((o) => o !== 'acquired'), `round ${round}: ${outcomes.join(' ')}`).toEqual(Array(racers.length - 1).fill('store_locked'));
        expect(fs.readdirSync(dir), 'only the lock, no takeover file left').toEqual([LOCK_FILE_NAME]);
        for (const racer of racers) racer.send('release');
        expect(await Promise.all(racers.map((racer) => racer.line()))).toEqual(racers.map(() => 'released'));
        expect(fs.existsSync(lockPath), `round ${round}: the winner released the lock`).toBe(false);
      }
    } finally {
      for (const racer of racers) racer.stop();
    }
  }, 120_000);
});
