/**
 * The shipped PGlite template (src/store/pgdata-template.ts, issue 11 item 5): the archive
 * format, what may be unpacked where, and crash safety (`PG_VERSION` last, an interrupted
 * unpacking redone, a directory of the user's never touched).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { confinedName, packDataDir, readTar, TemplateError, unpackTemplate, writeTar, type TarEntry } from '../../src/store/pgdata-template.js';

const file = (p: string, text: string): TarEntry => ({ path: p, type: 'file', data: Buffer.from(text) });
const dir = (p: string): TarEntry => ({ path: p, type: 'dir', data: new Uint8Array(0) });

describe('confinedName', () => {
  it.each([
    ['base/1/112', 'base/1/112'],
    ['/base/1/112', 'base/1/112'], // PGlite's own dumps
    ['./PG_VERSION', 'PG_VERSION'],
    ['pg_wal/', 'pg_wal'],
  ])('%s → %s', (raw, want) => expect(confinedName(raw)).toBe(want));
  it.each(['../etc/passwd', 'base/../../x', 'a//b', '', '/', 'a/./b'])('%j is refused', (raw) => {
    expect(() => confinedName(raw)).toThrow(TemplateError);
  });
});

describe('readTar / writeTar', () => {
  let tmp = '';
  beforeEach(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'navi-tar-'))));
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  const entries = [dir('base'), dir('base/1'), file('base/1/112', 'x'.repeat(8192)), file(`deep/${'d'.repeat(90)}/${'f'.repeat(90)}`, 'long name'), file('empty', ''), file('PG_VERSION', '17\n')];

  it('round-trips files, directories, empty files and names longer than 100 bytes', () => {
    const back = readTar(writeTar(entries));
    expect(back.map((e) => [e.path, e.type, Buffer.from(e.data).toString()])).toEqual(entries.map((e) => [e.path, e.type, Buffer.from(e.data).toString()]));
  });

  it('writes what the system tar reads (a standard ustar archive)', () => {
    const archive = path.join(tmp, 't.tar');
    fs.writeFileSync(archive, writeTar(entries));
    const listed = execFileSync('tar', ['tf', archive], { encoding: 'utf8' }).trim().split('\n');
    expect(listed.map((l) => l.replace(/\/$/, ''))).toEqual(entries.map((e) => e.path));
  });

  it('reads what the system tar writes', () => {
    fs.mkdirSync(path.join(tmp, 'src/base'), { recursive: true });
    fs.writeFileSync(path.join(tmp, 'src/base/1'), 'one');
    fs.writeFileSync(path.join(tmp, 'src/PG_VERSION'), '17\n');
    const tar = execFileSync('tar', ['--format=ustar', '-cf', '-', '-C', path.join(tmp, 'src'), 'base', 'PG_VERSION']);
    expect(readTar(tar).map((e) => [e.path, e.type])).toEqual([['base', 'dir'], ['base/1', 'file'], ['PG_VERSION', 'file']]);
  });

  it.each([
    ['a corrupted header (checksum)', (t: Buffer): Buffer => Buffer.concat([Buffer.from('X'), t.subarray(1)])],
    ['a truncated archive', (t: Buffer): Buffer => t.subarray(0, 700)],
    ['no end marker', (t: Buffer): Buffer => t.subarray(0, 512 + 512)],
  ])('refuses %s', (_what, damage) => {
    expect(() => readTar(damage(writeTar([file('a', 'x'.repeat(600))])))).toThrow(TemplateError);
  });

  it('refuses a symlink member (type 2): nothing but files and directories is unpacked', () => {
    fs.mkdirSync(path.join(tmp, 'src'));
    fs.symlinkSync('/etc/passwd', path.join(tmp, 'src/link'));
    const tar = execFileSync('tar', ['--format=ustar', '-cf', '-', '-C', path.join(tmp, 'src'), 'link']);
    expect(() => readTar(tar)).toThrow(/not a file or directory/);
  });
});

describe('unpackTemplate', () => {
  let tmp = '';
  let archive = '';
  let data = '';
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'navi-tpl-'));
    const src = path.join(tmp, 'src');
    fs.mkdirSync(path.join(src, 'base/1'), { recursive: true });
    fs.writeFileSync(path.join(src, 'base/1/112'), 'catalog');
    fs.writeFileSync(path.join(src, 'PG_VERSION'), '17\n');
    fs.writeFileSync(path.join(src, 'navi.lock'), 'not packed');
    archive = path.join(tmp, 'template.tar.gz');
    fs.writeFileSync(archive, packDataDir(src));
    data = path.join(tmp, 'pgdata');
    fs.mkdirSync(data, { mode: 0o700 });
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('packs PG_VERSION last and leaves navi’s own files out', () => {
    const names = readTar(zlib.gunzipSync(fs.readFileSync(archive))).map((e) => e.path);
    expect(names).toEqual(['base', 'base/1', 'base/1/112', 'PG_VERSION']);
  });

  it('unpacks into an empty directory (navi’s lock aside), files 0600', async () => {
    fs.writeFileSync(path.join(data, 'navi.lock'), 'held');
    expect(await unpackTemplate(data, archive)).toBe(true);
    expect(fs.readFileSync(path.join(data, 'base/1/112'), 'utf8')).toBe('catalog');
    expect(fs.readFileSync(path.join(data, 'PG_VERSION'), 'utf8')).toBe('17\n');
    expect(fs.statSync(path.join(data, 'base/1/112')).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(data).sort()).toEqual(['PG_VERSION', 'base', 'navi.lock']);
  });

  it('leaves an existing database alone', async () => {
    fs.writeFileSync(path.join(data, 'PG_VERSION'), '16\n');
    expect(await unpackTemplate(data, archive)).toBe(false);
    expect(fs.readdirSync(data)).toEqual(['PG_VERSION']);
  });

  it('never touches a directory holding files of the user’s (NAVI_DATA_DIR pointed at a project)', async () => {
    fs.writeFileSync(path.join(data, 'notes.txt'), 'mine');
    expect(await unpackTemplate(data, archive)).toBe(false);
    expect(fs.readdirSync(data)).toEqual(['notes.txt']);
  });

  it('an interrupted unpacking (its marker left behind, no PG_VERSION) is cleared and redone', async () => {
    fs.writeFileSync(path.join(data, 'navi-unpacking'), '');
    fs.mkdirSync(path.join(data, 'base'));
    fs.writeFileSync(path.join(data, 'base/half-written'), 'x');
    expect(await unpackTemplate(data, archive)).toBe(true);
    expect(fs.readdirSync(data).sort()).toEqual(['PG_VERSION', 'base']);
    expect(fs.readdirSync(path.join(data, 'base'))).toEqual(['1']);
  });

  it('a failure part way leaves no PG_VERSION and nothing of the template (the next open retries)', async () => {
    // base/1 exists as a file in the target's way of the template's directory: writing fails.
    const bad = path.join(tmp, 'bad.tar.gz');
    fs.writeFileSync(bad, zlib.gzipSync(writeTar([file('base', 'a file where a directory goes'), file('base/1/112', 'x'), file('PG_VERSION', '17\n')])));
    await expect(unpackTemplate(data, bad)).rejects.toThrow();
    expect(fs.readdirSync(data)).toEqual([]);
  });

  it('no template shipped: false, the directory untouched (PGlite runs initdb)', async () => {
    expect(await unpackTemplate(data, path.join(tmp, 'missing.tar.gz'))).toBe(false);
    expect(fs.readdirSync(data)).toEqual([]);
  });
});

describe('the template the build ships (dist/pgdata-template.tar.gz)', () => {
  it('a new data directory comes from it already migrated: every shipped migration is in it, and navi says it is creating the database', async () => {
    const { pgdataTemplatePath } = await import('../../src/store/pgdata-template.js');
    expect(fs.existsSync(pgdataTemplatePath()), 'npm run build makes the template').toBe(true);
    const { migrateDatabase } = await import('../../src/store/open.js');
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'navi-tpl-open-'));
    try {
      const notices: string[] = [];
      const dataDir = path.join(tmp, 'pgdata');
      const report = await migrateDatabase({ dataDir, notice: (m) => notices.push(m) });
      expect(report.total).toBeGreaterThan(0);
      expect(report.applied, 'the template is as new as the migrations shipped beside it').toBe(0);
      expect(notices).toEqual([`creating the database in ${dataDir} (first run)`]);
      expect(fs.readdirSync(dataDir)).not.toContain('navi-unpacking');
      // An existing store: no notice.
      await migrateDatabase({ dataDir, notice: (m) => notices.push(m) });
      expect(notices).toHaveLength(1);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }, 60_000);
});
