/**
 * One loop per working tree (issue 18 item 10): the lock at the top of the work tree refuses a
 * second loop naming the first, is released, and is taken over from a loop that died.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { acquireTreeLock, TREE_LOCK_FILE } from '../../src/loop/tree-lock.js';

function tree(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'navi-tree-lock-'));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  spawnSync('git', ['init', '-q'], { cwd: dir });
  fs.mkdirSync(path.join(dir, 'sub'));
  return dir;
}

describe('acquireTreeLock', () => {
  it('refuses a second loop in the same tree (from a subfolder too) naming the first; free again once released', async () => {
    const dir = tree();
    const lock = await acquireTreeLock(dir, 'run_one');
    expect(lock.path).toBe(path.join(fs.realpathSync(dir), TREE_LOCK_FILE));
    await expect(acquireTreeLock(path.join(dir, 'sub'), 'run_two')).rejects.toMatchObject({ code: 'loop_tree_busy', exitCode: 2 });
    lock.release();
    lock.release();
    expect(fs.existsSync(lock.path)).toBe(false);
    const again = await acquireTreeLock(path.join(dir, 'sub'), 'run_two');
    again.release();
  });

  it('names the running loop when another process holds it', async () => {
    const dir = tree();
    const file = path.join(dir, TREE_LOCK_FILE);
    fs.mkdirSync(path.dirname(file));
    // A live process that is not this one: the parent of this test process.
    fs.writeFileSync(file, JSON.stringify({ run_id: 'run_live', pid: process.ppid, host: os.hostname(), since: '' }));
    await expect(acquireTreeLock(dir, 'run_me')).rejects.toThrow(/loop run run_live is running in this working tree/);
  });

  it('takes over the lock of a loop whose process is gone, saying so', async () => {
    const dir = tree();
    const file = path.join(dir, TREE_LOCK_FILE);
    fs.mkdirSync(path.dirname(file));
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    fs.writeFileSync(file, JSON.stringify({ run_id: 'run_dead', pid: dead, host: os.hostname(), since: '' }));
    const lock = await acquireTreeLock(dir, 'run_me');
    expect(lock.note).toMatch(/^loop run run_dead left its lock on this working tree: /);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ run_id: 'run_me', pid: process.pid });
    lock.release();
  });

  it('an empty lock file just created is a loop starting (busy); an old one is debris (taken)', async () => {
    const dir = tree();
    const file = path.join(dir, TREE_LOCK_FILE);
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(file, '');
    await expect(acquireTreeLock(dir, 'run_me')).rejects.toThrow(/another loop is starting in this working tree/);
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(file, old, old);
    const lock = await acquireTreeLock(dir, 'run_me');
    lock.release();
  });

  it('writes nothing through a symlinked .agent', async () => {
    const dir = tree();
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'navi-outside-'));
    onTestFinished(() => fs.rmSync(outside, { recursive: true, force: true }));
    fs.symlinkSync(outside, path.join(dir, '.agent'));
    const lock = await acquireTreeLock(dir, 'run_me');
    expect(fs.readdirSync(outside)).toEqual([]);
    lock.release();
  });
});
