/**
 * Opening the store without a working database: default locations, URL redaction, and the
 * one-line errors a user sees for an unwritable directory or an unreachable server.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidInputError, StorageError } from '../../src/errors.js';
import { describeServer, redactUrl } from '../../src/store/database-url.js';
import { defaultDataDir, openStore } from '../../src/store/open.js';
import { listenOnLoopback } from '../support/ports.js';
import { tempDir } from './support.js';

const scratch = tempDir('open');
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

async function openError(opts: Parameters<typeof openStore>[0]): Promise<Error> {
  try {
    const store = await openStore(opts);
    await store.close();
  } catch (err) {
    if (err instanceof Error) return err;
    throw err;
  }
  throw new Error('expected openStore to fail');
}

describe('defaultDataDir', () => {
  it.each([
    [{ NAVI_DATA_DIR: '/srv/navi-data', XDG_DATA_HOME: '/x', HOME: '/home/u' }, '/srv/navi-data'],
    [{ XDG_DATA_HOME: '/home/u/.data', HOME: '/home/u' }, '/home/u/.data/navi/pgdata'],
    [{ HOME: '/home/u' }, '/home/u/.local/share/navi/pgdata'],
    // The XDG spec says a relative XDG_DATA_HOME is invalid and must be ignored.
    [{ XDG_DATA_HOME: 'relative', HOME: '/home/u' }, '/home/u/.local/share/navi/pgdata'],
    [{ NAVI_DATA_DIR: '', HOME: '/home/u' }, '/home/u/.local/share/navi/pgdata'],
  ])('%o → %s', (env, expected) => {
    expect(defaultDataDir(env)).toBe(expected);
  });

  it('resolves a relative NAVI_DATA_DIR against the working directory', () => {
    expect(defaultDataDir({ NAVI_DATA_DIR: 'db' })).toBe(path.resolve('db'));
  });
});

describe('database URLs in messages', () => {
  it.each([
    ['postgres://navi:s3cret@db.example:6543/app', 'postgres://navi:***@db.example:6543/app'],
    ['postgresql://navi@db/app', 'postgresql://navi@db/app'],
    ['postgres://u:p%40ss@h/db?sslmode=require&password=x', 'postgres://u:***@h/db?sslmode=require&password=***'],
    ['postgres://u:pw@h1:5432,h2:5433/db', 'postgres://u:***@h1:5432,h2:5433/db'],
  ])('redacts %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });

  it('names host:port, user and database', () => {
    expect(describeServer('postgres://navi:pw@db.example:6543/app')).toEqual({
      hostPort: 'db.example:6543',
      user: 'navi',
      database: 'app',
    });
    expect(describeServer('postgres://db.example')).toEqual({
      hostPort: 'db.example:5432',
      user: 'postgres',
      database: 'postgres',
    });
    expect(describeServer('postgres://u:pw@h1:5432,h2:5433/db').hostPort).toBe('h1:5432');
  });
});

describe('openStore errors', () => {
  it('an unreachable server is a StorageError naming host:port, never the password', async () => {
    const err = await openError({ url: 'postgres://navi:hunter2@127.0.0.1:1/navi', dataDir: scratch });
    expect(err).toBeInstanceOf(StorageError);
    expect(err).toMatchObject({ code: 'store_unreachable', exitCode: 1 });
    expect(err.message).toContain('127.0.0.1:1');
    expect(err.message).toContain('connection refused');
    expect(err.message).not.toContain('hunter2');
    expect(err.message).not.toContain('\n');
  });

  it('a server that accepts but never answers fails after connectTimeoutS', async () => {
    const sockets: net.Socket[] = [];
    const server = net.createServer((socket) => sockets.push(socket));
    const port = await listenOnLoopback(server);
    try {
      // The server never answers: only the 1 s limit can end the open (it names itself below).
      const err = await openError({ url: `postgres://u:pw@127.0.0.1:${port}/db`, dataDir: scratch, connectTimeoutS: 1 });
      expect(err).toMatchObject({ code: 'store_unreachable' });
      expect(err.message).toContain(`127.0.0.1:${port} (no answer within 1 s)`);
    } finally {
      for (const socket of sockets) socket.destroy();
      server.close();
    }
  });

  it('a URL that is not postgres:// is invalid input', async () => {
    const err = await openError({ url: 'mysql://root:pw@localhost/db', dataDir: scratch });
    expect(err).toBeInstanceOf(InvalidInputError);
    expect(err).toMatchObject({ code: 'db_url_invalid', exitCode: 2 });
    expect(err.message).not.toContain(':pw@');
  });

  it('a data directory under a regular file is reported as not writable', async () => {
    const file = path.join(scratch, 'not-a-dir');
    fs.writeFileSync(file, '');
    const dataDir = path.join(file, 'navi', 'pgdata');
    const err = await openError({ dataDir });
    expect(err).toBeInstanceOf(StorageError);
    expect(err).toMatchObject({ code: 'store_dir_not_writable' });
    expect(err.message).toContain(dataDir);
    expect(err.message).toContain('NAVI_DATA_DIR');
  });

  it('a data directory path that is a file is reported as not writable', async () => {
    const file = path.join(scratch, 'pgdata-file');
    fs.writeFileSync(file, '');
    await expect(openStore({ dataDir: file })).rejects.toMatchObject({ code: 'store_dir_not_writable' });
  });

  // root ignores permission bits, so this case only means something for ordinary users.
  it.skipIf(process.getuid?.() === 0)('a read-only parent is reported as not writable', async () => {
    const parent = path.join(scratch, 'read-only');
    fs.mkdirSync(parent, { mode: 0o500 });
    const dataDir = path.join(parent, 'pgdata');
    const err = await openError({ dataDir });
    expect(err).toMatchObject({ code: 'store_dir_not_writable' });
    expect(err.message).toContain('permission denied');
  });
});
