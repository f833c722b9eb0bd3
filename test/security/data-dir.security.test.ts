/**
 * Data directory permissions (SPEC §9, §10; issue 5 item 3). PGlite creates its files 0666 and
 * its directories 0755 whatever the umask, and no parents; navi must keep the data private:
 * the data directory 0700 (re-tightened on every open), its parents 0700 when navi created them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireDirLock } from '../../src/store/lock.js';
import { assertBuilt, cleanEnv, makeTempDir, runNavi } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import { describeRun, tempDir } from '../scenario/helpers.js';

const mode = (p: string): string => (fs.statSync(p).mode & 0o777).toString(8).padStart(3, '0');

/** Entries under `dir` (recursively) that a group or other user could read, write or enter. */
function openToOthers(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((e) => path.join(e.parentPath, e.name))
    .filter((p) => (fs.lstatSync(p).mode & 0o077) !== 0)
    .map((p) => `${mode(p)} ${path.relative(dir, p)}`);
}

describe('a fresh PGlite data directory (created under umask 000, the most hostile one)', () => {
  let base = '';
  let dataDir = '';
  beforeAll(async () => {
    assertBuilt();
    base = makeTempDir('perm');
    dataDir = path.join(base, 'made-by-navi', 'nested', 'pgdata');
    const previous = process.umask(0o000);
    try {
      const run = await runNavi(['db', 'migrate'], { cwd: base, env: cleanEnv({ NAVI_DATA_DIR: dataDir }), timeoutMs: 30_000 });
      if (run.code !== 0) throw new Error(describeRun(run));
    } finally {
      process.umask(previous);
    }
  }, 40_000);
  afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

  it('the data directory and the parents navi created are 0700', () => {
    expect(mode(path.join(base, 'made-by-navi'))).toBe('700');
    expect(mode(path.join(base, 'made-by-navi', 'nested'))).toBe('700');
    expect(mode(dataDir)).toBe('700');
  });

  it('nothing inside the data directory is open to group or others', () => {
    // Today only the 0700 directory stands between other users and the database: PGlite makes
    // its files 0666 whatever the umask, and its directories 0777 & ~umask; navi leaves them so.
    // Loosen the data directory (a backup, `chmod -R a+rX`, a copy elsewhere) and it is all readable.
    const open = openToOthers(dataDir);
    expect(open.slice(0, 5), `${open.length} entries inside the data directory are open to group/others`).toEqual([]);
  });
});

describe('the PGlite directory lock', () => {
  it('is created 0600 (it names the owner: pid, host, start time)', () => {
    const dir = tempDir('lock');
    const lock = acquireDirLock(dir);
    try {
      expect(mode(lock.path)).toBe('600');
    } finally {
      lock.release();
    }
  });
});

forEachBackend(
  (backend) => {
    it('an existing data directory that is too open is made 0700 again on open; an existing parent is left as it is', async () => {
      const db = await backend.fresh();
      fs.chmodSync(db.dataDir, 0o755);
      const parent = path.dirname(db.dataDir);
      fs.chmodSync(parent, 0o750);
      const cwd = tempDir('perm-cwd');
      const run = await runNavi(['sessions', 'list'], { cwd, env: cleanEnv(db.env), timeoutMs: 20_000 });
      expect(run.code, describeRun(run)).toBe(0);
      expect(mode(db.dataDir)).toBe('700');
      expect(mode(parent)).toBe('750');
    }, 30_000);
  },
  { only: 'pglite' },
);
