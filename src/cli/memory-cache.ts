/**
 * The memory cache file (see src/agent/memory.ts): the rendered memory facts per user as of
 * the last run, so the first model call of the next run does not wait for the embedded
 * database to open (~0.3 s for PGlite). Any problem reading it means "no cache": the run then
 * reads the database, as it would without one.
 *
 * It belongs to exactly one store, so it lives inside that store's data directory
 * (`<data dir>/navi-memory-cache.json`, 0600, next to navi's lock): removed with it, never
 * shared by two data directories in one parent (a fact remembered in one store must never reach
 * the model in a run on another), and only one navi process at a time holds the directory, so
 * every change of the facts goes through a process that refreshes it. PostgreSQL has no cache:
 * a server is shared by other machines and clients that change the facts without navi seeing
 * it, and it answers in milliseconds anyway.
 *
 * Its content goes into the first request as facts about the user, so a file someone else
 * could have written (a shared `NAVI_DATA_DIR`) is not read.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MemoryCache } from '../agent/memory.js';
import type { NaviConfig } from '../config/schema.js';
import { defaultDataDir } from '../store/open.js';

type CacheFile = { users: Record<string, string[]> };

export const MEMORY_CACHE_FILE = 'navi-memory-cache.json';

/** The cache file of an embedded store: inside its data directory (see the header). */
export function memoryCachePath(dataDir: string): string {
  return join(dataDir, MEMORY_CACHE_FILE);
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
        // No mkdir: the data directory exists once the store has answered, and a cache must not
        // create one (an empty directory would look like a store to the next run).
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

/** The cache of the configured database: embedded PGlite only (PostgreSQL has none, see the header). */
export function memoryCacheFor(config: NaviConfig, env: Record<string, string | undefined>): MemoryCache | undefined {
  if (config.db.url) return undefined;
  return fileMemoryCache(memoryCachePath(config.db.data_dir ?? defaultDataDir(env)));
}
