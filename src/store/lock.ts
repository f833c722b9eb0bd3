/**
 * An exclusive lock on a PGlite data directory. PGlite has none of its own: two processes on one
 * directory silently lose writes and corrupt keys (STACK-NOTES), so one process holds it and
 * serves the database to the others (src/store/shared-pglite.ts); one that cannot reach a
 * serving holder gets a message that names the lock and points at PostgreSQL.
 *
 * The lock is a file created with O_EXCL holding the owner's pid, hostname and start time. A lock
 * whose process is gone (killed with -9, machine rebooted) is stale and is taken over.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StorageError } from '../errors.js';
import { errnoCode } from '../util/guards.js';

/** Name of the lock file inside the data directory. */
export const LOCK_FILE_NAME = 'navi.lock';

/**
 * A lock file that is still empty or half written this recently is treated as being created
 * right now by its owner (the window between O_EXCL create and the write); older ones are debris.
 */
const UNREADABLE_LOCK_GRACE_MS = 5_000;

/** What the lock file holds (JSON). */
export interface LockOwner {
  pid: number;
  hostname: string;
  /** ISO time the owner took the lock. */
  started_at: string;
}

/** A held lock. `release()` is idempotent and synchronous (it also runs on process exit). */
export interface DirLock {
  /** Absolute path of the lock file. */
  readonly path: string;
  readonly owner: LockOwner;
  release(): void;
}

/** Lock files held by this process, so a second open here fails the same way as elsewhere. */
const heldHere = new Map<string, LockOwner>();

/**
 * Takes the lock on `dir` (which must exist) or throws `StorageError` `store_locked` when a live
 * process holds it. A stale lock (dead pid on this host) is removed and taken over.
 */
export function acquireDirLock(dir: string): DirLock {
  const lockPath = path.join(path.resolve(dir), LOCK_FILE_NAME);
  const ours = heldHere.get(lockPath);
  if (ours) throw lockedError(lockPath, ours);

  // A round clears a stale lock, the next takes it; a process that wins a race for the same
  // stale lock shows up as a live owner and we fail cleanly.
  for (let attempt = 0; attempt < 3; attempt++) {
    const owner = newOwner();
    if (tryCreate(lockPath, owner)) return holdLock(lockPath, owner);

    const existing = readLock(lockPath);
    if (existing === 'missing') continue; // its owner released it meanwhile
    if (!isStale(lockPath, existing)) throw lockedError(lockPath, existing);
    removeStale(lockPath, existing);
  }
  throw lockedError(lockPath, readLock(lockPath));
}

function newOwner(): LockOwner {
  return { pid: process.pid, hostname: os.hostname(), started_at: new Date().toISOString() };
}

/** A lock whose owner is gone, or an unreadable file older than the grace period. */
function isStale(lockPath: string, seen: LockOwner | 'unreadable'): boolean {
  return seen === 'unreadable' ? isOldDebris(lockPath) : !isAlive(seen);
}

/** O_EXCL create; false when the file already exists. Other errors (not writable…) propagate. */
function tryCreate(lockPath: string, owner: LockOwner): boolean {
  let fd: number;
  try {
    fd = fs.openSync(lockPath, 'wx', 0o600);
  } catch (err) {
    if (errnoCode(err) === 'EEXIST') return false;
    throw err;
  }
  try {
    fs.writeSync(fd, `${JSON.stringify(owner)}\n`);
  } finally {
    fs.closeSync(fd);
  }
  return true;
}

function holdLock(lockPath: string, owner: LockOwner): DirLock {
  heldHere.set(lockPath, owner);
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    heldHere.delete(lockPath);
    process.removeListener('exit', release);
    removeIfOwnedBy(lockPath, owner);
  };
  // 'exit' handlers must be synchronous; this covers process.exit() without close().
  process.on('exit', release);
  return { path: lockPath, owner, release };
}

/** Deletes the file only if it still holds `owner`: never a lock someone else took over. */
function removeIfOwnedBy(file: string, owner: LockOwner): void {
  const current = readLock(file);
  if (typeof current === 'object' && sameOwner(current, owner)) {
    try {
      fs.unlinkSync(file);
    } catch {
      // Best effort: a leftover file holds our (soon dead) pid and will be taken over.
    }
  }
}

/**
 * Removes a stale lock, serialised by a second O_EXCL file (`navi.lock.takeover`): of the
 * processes that found the same stale lock, only the one holding the takeover file deletes it, and
 * only if it is still the very file that was judged stale. Without this, one process could delete
 * a lock another had just created over the stale one, and both would think they hold it.
 * Throws `store_locked` when another process is taking over right now (it will hold the lock).
 */
function removeStale(lockPath: string, seen: LockOwner | 'unreadable'): void {
  const takeoverPath = `${lockPath}.takeover`;
  const taker = newOwner();
  if (!tryCreate(takeoverPath, taker)) {
    const other = readLock(takeoverPath);
    // A taker that died between its two steps leaves debris; clear it and let the next round try.
    if (other !== 'missing' && isStale(takeoverPath, other)) {
      fs.rmSync(takeoverPath, { force: true });
      return;
    }
    throw lockedError(lockPath, null);
  }
  try {
    const now = readLock(lockPath);
    const unchanged =
      seen === 'unreadable' ? now === 'unreadable' : typeof now === 'object' && sameOwner(now, seen);
    if (!unchanged) {
      if (now === 'missing') return;
      throw lockedError(lockPath, now);
    }
    fs.rmSync(lockPath, { force: true });
  } finally {
    removeIfOwnedBy(takeoverPath, taker);
  }
}

function readLock(lockPath: string): LockOwner | 'missing' | 'unreadable' {
  let text: string;
  try {
    text = fs.readFileSync(lockPath, 'utf8');
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return 'missing';
    throw err;
  }
  try {
    const value: unknown = JSON.parse(text);
    if (
      typeof value === 'object' &&
      value !== null &&
      'pid' in value &&
      'hostname' in value &&
      'started_at' in value &&
      typeof value.pid === 'number' &&
      Number.isInteger(value.pid) &&
      value.pid > 0 &&
      typeof value.hostname === 'string' &&
      typeof value.started_at === 'string'
    ) {
      return { pid: value.pid, hostname: value.hostname, started_at: value.started_at };
    }
  } catch {
    // fall through: half-written or foreign content
  }
  return 'unreadable';
}

function sameOwner(a: LockOwner, b: LockOwner): boolean {
  return a.pid === b.pid && a.hostname === b.hostname && a.started_at === b.started_at;
}

/**
 * Whether the lock's owner may still be running. A lock from another host cannot be checked, so
 * it counts as live (the message says how to clear it by hand).
 */
function isAlive(owner: LockOwner): boolean {
  if (owner.hostname !== os.hostname()) return true;
  // Our own pid: alive if this process holds that very lock (the directory reached through
  // another path, e.g. a symlink); otherwise a previous process with the same pid (a restarted
  // container's pid 1) left it.
  if (owner.pid === process.pid) return [...heldHere.values()].some((held) => sameOwner(held, owner));
  try {
    process.kill(owner.pid, 0);
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return errnoCode(err) === 'EPERM';
  }
  return !pidReusedSince(owner);
}

/**
 * On Linux, a pid whose process started after the lock was taken belongs to someone else (pids
 * are recycled). Elsewhere we cannot tell and trust the pid.
 */
function pidReusedSince(owner: LockOwner): boolean {
  const lockedAt = Date.parse(owner.started_at);
  const startedAt = processStartMs(owner.pid);
  // btime has one-second resolution: leave a margin before calling it a different process.
  return !Number.isNaN(lockedAt) && startedAt !== undefined && startedAt > lockedAt + 2_000;
}

/** Clock ticks per second for /proc times; 100 on every mainstream Linux build. */
const CLOCK_TICKS_PER_S = 100;

/** Start time of `pid` in ms since the epoch, from /proc (Linux only). */
function processStartMs(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: count from the last ')'.
    // What follows starts at field 3; starttime is field 22.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[19]);
    const btime = /^btime (\d+)$/m.exec(fs.readFileSync('/proc/stat', 'utf8'))?.[1];
    if (!Number.isFinite(ticks) || btime === undefined) return undefined;
    return Number(btime) * 1000 + (ticks * 1000) / CLOCK_TICKS_PER_S;
  } catch {
    return undefined;
  }
}

function isOldDebris(lockPath: string): boolean {
  try {
    return Date.now() - fs.statSync(lockPath).mtimeMs > UNREADABLE_LOCK_GRACE_MS;
  } catch {
    return true;
  }
}

/** `owner`: what the lock file said (nothing usable → "another navi process"). */
function lockedError(lockPath: string, owner: LockOwner | 'missing' | 'unreadable' | null): StorageError {
  return new StorageError('store_locked', lockedMessage(lockPath, owner, os.hostname()));
}

/**
 * What `store_locked` says. It is raised only after the guest waited for the holder to serve the
 * directory (src/store/open.ts), so the holder is live and does not share it. Deleting a live lock
 * lets two processes write one directory (lost writes, corrupt keys): the message never suggests
 * it for a process on this machine, whose dead locks are taken over without help.
 */
export function lockedMessage(lockPath: string, owner: LockOwner | 'missing' | 'unreadable' | null, thisHost: string): string {
  const known = typeof owner === 'object' && owner !== null;
  const who = known ? `process ${owner.pid} on ${owner.hostname} (since ${owner.started_at})` : 'another navi process';
  const elsewhere = known && owner.hostname !== thisHost;
  return (
    `The embedded database is held by ${who}, which does not serve it to other navi processes ` +
    `(lock file ${lockPath}); wait for it to finish, or set DATABASE_URL to a PostgreSQL server for concurrent runs. ` +
    (elsewhere
      ? `That process runs on another machine: only if ${owner.hostname} is down for good, delete the lock file.`
      : 'A lock whose process has exited is taken over automatically: never delete it while that process runs.')
  );
}

/** How long a lock's heartbeat (its mtime) counts as fresh: the holder touches it every LOCK_HEARTBEAT_MS while it opens the database. */
export const LOCK_HEARTBEAT_MS = 500;
const LOCK_HEARTBEAT_FRESH_MS = 5_000;

/**
 * While the holder opens and migrates the database (no socket yet), it touches its lock file, so
 * a guest started at the same moment knows to wait for the socket rather than fail. Stops itself
 * when stopped or when the lock is no longer ours.
 */
export function startLockHeartbeat(lock: DirLock): { stop(): void } {
  const timer = setInterval(() => {
    try {
      const now = new Date();
      fs.utimesSync(lock.path, now, now);
    } catch {
      clearInterval(timer);
    }
  }, LOCK_HEARTBEAT_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/**
 * Worth another try rather than `store_locked`: the lock is fresh (its holder is opening the
 * database), gone (released meanwhile), or a stale one is being taken over right now (its
 * `.takeover` file exists: the taker will hold the lock and serve the directory).
 */
export function lockInFlux(dir: string, now = Date.now()): boolean {
  const lockPath = path.join(path.resolve(dir), LOCK_FILE_NAME);
  return lockHeartbeatFresh(dir, now) || !fs.existsSync(lockPath) || fs.existsSync(`${lockPath}.takeover`);
}

/** True while `dir`'s lock was taken or touched recently: its holder is opening the database. */
export function lockHeartbeatFresh(dir: string, now = Date.now()): boolean {
  try {
    return now - fs.statSync(path.join(path.resolve(dir), LOCK_FILE_NAME)).mtimeMs < LOCK_HEARTBEAT_FRESH_MS;
  } catch {
    return false;
  }
}
