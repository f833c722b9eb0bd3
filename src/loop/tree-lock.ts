/**
 * One loop per working tree (issue 18 item 10). Two loops in one tree count each other's edits,
 * commits and markers as their own evidence, so a loop holds `.agent/loop.lock` at the top of its
 * work tree (the git top folder, else its cwd) while it runs, and a second loop there is refused
 * at once, naming the running loop's id. Stale-safe like `navi.lock`: the file holds the owner's
 * pid, host and run id, and its modification time is a heartbeat; a lock whose owner is provably
 * gone (ownership.ts: same host and a dead pid, or no heartbeat for STALE_MS) is taken over.
 */
import fs from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { InvalidInputError } from '../errors.js';
import { errnoCode, isRecord } from '../util/guards.js';
import { workTreeRoot } from './git-probe.js';
import { HEARTBEAT_MS, pidAlive, takeoverVerdict } from './ownership.js';

/** The lock file, relative to the work tree's top folder (navi's bookkeeping folder: never evidence). */
export const TREE_LOCK_FILE = path.join('.agent', 'loop.lock');

/** A lock file still empty this recently is being written by its owner (between create and write). */
const UNREADABLE_GRACE_MS = 5_000;

/** What the lock file holds (JSON). */
interface Holder {
  run_id: string;
  pid: number;
  host: string;
  since: string;
}

/** A held tree lock. */
export interface TreeLock {
  readonly path: string;
  /** Said as a warning when a dead loop's lock was taken over; null otherwise. */
  readonly note: string | null;
  /** Idempotent; also runs when the process exits. */
  release(): void;
}

/** Lock files held by this process (a second loop here is refused like one elsewhere). */
const heldHere = new Set<string>();

function readHolder(file: string): { holder: Holder | null; mtime: Date } | 'missing' {
  try {
    const mtime = fs.statSync(file).mtime;
    let holder: Holder | null = null;
    try {
      const v: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
      if (isRecord(v) && typeof v.run_id === 'string' && typeof v.pid === 'number' && typeof v.host === 'string') {
        holder = { run_id: v.run_id, pid: v.pid, host: v.host, since: typeof v.since === 'string' ? v.since : '' };
      }
    } catch {
      // Half written or not ours: judged by its age below.
    }
    return { holder, mtime };
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return 'missing';
    throw err;
  }
}

function busy(root: string, holder: Holder | null, why: string): InvalidInputError {
  const who = holder === null ? 'another loop is starting' : `loop run ${holder.run_id} is running`;
  return new InvalidInputError(
    'loop_tree_busy',
    `${who} in this working tree (${root}): ${why}. Two loops in one tree would count each other's edits, commits and markers; ` +
      'wait for it, stop it, or run this loop in another clone or worktree (git worktree add)',
  );
}

/**
 * Takes the tree lock for `runId` or throws `loop_tree_busy` (exit 2) naming the loop that holds
 * it. A tree where the lock cannot be written (read-only) is not locked.
 */
export async function acquireTreeLock(cwd: string, runId: string, now: () => number = Date.now): Promise<TreeLock> {
  const root = (await workTreeRoot(cwd)) ?? path.resolve(cwd);
  const file = path.join(root, TREE_LOCK_FILE);
  if (heldHere.has(file)) throw busy(root, null, 'this process already runs a loop there');
  const me: Holder = { run_id: runId, pid: process.pid, host: hostname(), since: new Date(now()).toISOString() };
  let note: string | null = null;
  const unlocked: TreeLock = { path: file, note: null, release: () => undefined };
  try {
    // `.agent` as a symlink may lead out of the tree (markers.ts refuses it too): nothing is written there.
    if (fs.lstatSync(path.dirname(file), { throwIfNoEntry: false })?.isSymbolicLink() === true) return unlocked;
    fs.mkdirSync(path.dirname(file), { recursive: true });
  } catch {
    return unlocked;
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(file, `${JSON.stringify(me)}\n`, { flag: 'wx' });
      return hold(file, note);
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST') return unlocked;
    }
    const seen = readHolder(file);
    if (seen === 'missing') continue;
    const { holder, mtime } = seen;
    if (holder === null) {
      if (now() - mtime.getTime() < UNREADABLE_GRACE_MS) throw busy(root, null, 'its lock is being written');
    } else {
      const verdict = takeoverVerdict({ owner: { pid: holder.pid, host: holder.host, since: holder.since }, updatedAt: mtime, me, now: now(), isAlive: pidAlive });
      if (!verdict.ok) throw busy(root, holder, verdict.reason.replace(/^it is being run by/, 'run by'));
      note = `loop run ${holder.run_id} left its lock on this working tree: ${verdict.note.replace('the run', 'the tree')}`;
    }
    // Stale: removed, and the next round takes it (a rival doing the same shows up as a live owner).
    fs.rmSync(file, { force: true });
  }
  throw busy(root, null, 'its lock changed hands while navi was looking');
}

function hold(file: string, note: string | null): TreeLock {
  heldHere.add(file);
  // The file's modification time is the heartbeat that tells a live owner from a vanished one.
  const beat = setInterval(() => {
    const t = new Date();
    fs.utimes(file, t, t, () => undefined);
  }, HEARTBEAT_MS);
  beat.unref();
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    clearInterval(beat);
    heldHere.delete(file);
    process.removeListener('exit', release);
    try {
      fs.rmSync(file, { force: true });
    } catch {
      // Gone already, or the tree went read-only: a dead owner's lock is taken over anyway.
    }
  };
  process.once('exit', release);
  return { path: file, note, release };
}
