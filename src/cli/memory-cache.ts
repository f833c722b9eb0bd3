/**
 * The memory cache file (see src/agent/memory.ts): the rendered memory facts per user as of
 * the last run, so the first model call of the next run does not wait for the database to
 * open. Lives beside the data (0600). Any problem reading it means "no cache": the run then
 * reads the database, as it would without one.
 *
 * Its content goes into the first request as facts about the user, and the directory it lives
 * in may be shared (`NAVI_DATA_DIR=/tmp/pgdata`): a file someone else could have written is
 * not read.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { MemoryCache } from '../agent/memory.js';
import type { NaviConfig } from '../config/schema.js';
import { defaultDataDir } from '../store/open.js';

type CacheFile = { users: Record<string, string[]> };

/** One file per database: beside the PGlite directory, or keyed by a hash of the server URL. */
export function memoryCachePath(opts: { url?: string; dataDir: string }): string {
  if (opts.url) return join(dirname(opts.dataDir), `memory-cache-${createHash('sha256').update(opts.url).digest('hex').slice(0, 12)}.json`);
  return join(dirname(opts.dataDir), 'memory-cache.json');
}

/** What `trustedCacheFile` looks at: the stat of the opened file. */
export interface CacheFileStat {
  isFile(): boolean;
  uid: number;
  mode: number;
}

/**
 * Whether an opened cache file may be believed: a regular file, owned by the user running navi
 * (`uid`; undefined where there are no uids), writable by nobody else.
 */
export function trustedCacheFile(st: CacheFileStat, uid: number | undefined): boolean {
  return st.isFile() && (uid === undefined || st.uid === uid) && (st.mode & 0o022) === 0;
}

const currentUid = (): number | undefined => (typeof process.getuid === 'function' ? process.getuid() : undefined);

/** The file's text when it is trusted; a symlink, FIFO, or someone else's or a shared file is not read. */
function readTrusted(path: string): string | undefined {
  let fd: number;
  try {
    // O_NOFOLLOW: a symlink in its place is refused; O_NONBLOCK: a FIFO does not block the open.
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    return trustedCacheFile(fstatSync(fd), currentUid()) ? readFileSync(fd, 'utf8') : undefined;
  } finally {
    closeSync(fd);
  }
}

export function fileMemoryCache(path: string): MemoryCache {
  const read = (): CacheFile => {
    try {
      const text = readTrusted(path);
      if (text === undefined) return { users: {} };
      const parsed = JSON.parse(text) as CacheFile;
      return typeof parsed === 'object' && parsed !== null && typeof parsed.users === 'object' ? parsed : { users: {} };
    } catch {
      return { users: {} };
    }
  };
  return {
    get(user) {
      const lines = read().users[user];
      return Array.isArray(lines) && lines.every((l) => typeof l === 'string') ? lines : undefined;
    },
    set(user, lines) {
      try {
        const data = read();
        data.users[user] = lines;
        mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
        // A fresh name, created exclusively: nothing planted under it (a symlink) is followed.
        const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
        writeFileSync(tmp, JSON.stringify(data), { mode: 0o600, flag: 'wx' });
        try {
          renameSync(tmp, path);
        } catch (err) {
          unlinkSync(tmp);
          throw err;
        }
      } catch {
        // A cache that cannot be written only costs the next run a wait for the database.
      }
    },
  };
}

/** The cache of the configured database. */
export function memoryCacheFor(config: NaviConfig, env: Record<string, string | undefined>): MemoryCache {
  const dataDir = config.db.data_dir ?? defaultDataDir(env);
  return fileMemoryCache(memoryCachePath(config.db.url ? { url: config.db.url, dataDir } : { dataDir }));
}
