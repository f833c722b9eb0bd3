/**
 * One PGlite data directory, several navi processes (issue 11, item 6). PGlite has no lock of
 * its own and one session, so one process holds the directory (src/store/lock.ts); that process
 * also serves the database on a Unix socket (src/store/pglite-wire-server.cjs, in its database
 * worker) and says where in `<data dir>/navi.endpoint`. Another navi process that finds the
 * directory locked connects there with postgres.js, as to a PostgreSQL server: `navi runs show`
 * while a loop runs overnight, a second `navi run` in another terminal. Its statements run in the
 * holder's one session, one protocol unit or transaction at a time, never inside another's.
 *
 * Only the user can connect: the socket sits in the 0700 data directory, or (a path too long for
 * a socket address) in a private 0700 directory of its own named in the endpoint file, which is
 * itself 0600 inside the data directory.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StorageError } from '../errors.js';
import { isRecord } from '../util/guards.js';

export const ENDPOINT_FILE = 'navi.endpoint';
const SOCKET_NAME = 'navi.sock';
/** sun_path holds 108 bytes on Linux (104 on macOS), the terminating NUL included. */
const MAX_SOCKET_PATH = 100;

/** Where the holder of a directory serves it. */
export interface Endpoint {
  pid: number;
  socket: string;
}

/** A socket path for `dataDir`, and the private directory made for it when the data directory's path is too long. */
export function socketPathFor(dataDir: string): { socket: string; ownDir?: string } {
  const inside = path.join(dataDir, SOCKET_NAME);
  if (Buffer.byteLength(inside) <= MAX_SOCKET_PATH) return { socket: inside };
  const ownDir = fs.mkdtempSync(path.join(os.tmpdir(), 'navi-'));
  fs.chmodSync(ownDir, 0o700);
  return { socket: path.join(ownDir, 's'), ownDir };
}

/** Says where the directory is served (the lock is ours: any older socket or endpoint is stale). */
export function advertise(dataDir: string, endpoint: Endpoint): void {
  const file = path.join(dataDir, ENDPOINT_FILE);
  const tmp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(endpoint), { mode: 0o600, flag: 'wx' });
  fs.renameSync(tmp, file);
}

/** Removes the endpoint file (if still ours), the socket and its private directory. */
export function withdraw(dataDir: string, endpoint: Endpoint, ownDir: string | undefined): void {
  const file = path.join(dataDir, ENDPOINT_FILE);
  if (readEndpoint(dataDir)?.pid === endpoint.pid) fs.rmSync(file, { force: true });
  fs.rmSync(endpoint.socket, { force: true });
  if (ownDir !== undefined) fs.rmSync(ownDir, { recursive: true, force: true });
}

/** The endpoint the holder advertised, or null (none, unreadable, or not ours to trust). */
export function readEndpoint(dataDir: string): Endpoint | null {
  try {
    const file = path.join(dataDir, ENDPOINT_FILE);
    const st = fs.lstatSync(file);
    const uid = process.getuid?.();
    if (!st.isFile() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o022) !== 0) return null;
    const value: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (!isRecord(value) || typeof value.pid !== 'number' || typeof value.socket !== 'string') return null;
    return { pid: value.pid, socket: value.socket };
  } catch {
    return null;
  }
}

/** The socket of the live holder of `dataDir`, or null: no endpoint, or its process is gone. */
export function holderSocket(dataDir: string): Endpoint | null {
  const endpoint = readEndpoint(dataDir);
  if (endpoint === null || endpoint.pid === process.pid) return null;
  try {
    process.kill(endpoint.pid, 0);
  } catch {
    // Gone (ESRCH), or someone else's (EPERM) — then the endpoint file could not be ours either.
    return null;
  }
  return fs.existsSync(endpoint.socket) ? endpoint : null;
}

/** A client of an older navi connecting to a newer database, or the other way round. */
export function schemaMismatch(dataDir: string, pid: number): StorageError {
  return new StorageError(
    'store_locked',
    `The embedded database in ${dataDir} is in use by navi process ${pid}, which runs another version of navi's schema; ` +
      'wait for it to finish, or set DATABASE_URL to use PostgreSQL.',
  );
}
