/**
 * The memory cache file (see src/agent/memory.ts): the rendered memory facts per user as of
 * the last run, so the first model call of the next run does not wait for the database to
 * open. Lives beside the data (0600). Any problem reading it means "no cache": the run then
 * reads the database, as it would without one.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
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

export function fileMemoryCache(path: string): MemoryCache {
  const read = (): CacheFile => {
    try {
      const parsed = JSON.parse(readFileSync(path, 'utf8')) as CacheFile;
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
        const tmp = `${path}.${process.pid}.tmp`;
        writeFileSync(tmp, JSON.stringify(data), { mode: 0o600 });
        renameSync(tmp, path);
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
