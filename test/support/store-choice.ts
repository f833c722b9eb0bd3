/**
 * Which store an end-to-end test runs on (issue 36: each behaviour tested once). With both stores
 * at hand (DATABASE_URL set, as in CI), a scenario declared through `forEachBackend` runs on one
 * of them, chosen by a stable hash of its file and name, so each store carries about half of the
 * scenarios and a store-specific bug still meets many of them; the store's own contract
 * (`forEachBackend(fn, { both: 'why' })`, and test/store/) runs on both. Without DATABASE_URL
 * everything runs on PGlite; `NAVI_TEST_STORES=both` runs every scenario on both stores again.
 */
import { createHash } from 'node:crypto';
import type { BackendKind } from './databases.js';

/** The store for the test or group `name` declared directly in a `forEachBackend` callback of `file` (repository-relative, `/`-separated). */
export function storeFor(file: string, name: string): BackendKind {
  const digest = createHash('sha256').update(`${file}\0${name}`).digest();
  return ((digest[0] ?? 0) & 1) === 0 ? 'pglite' : 'postgres';
}

/** Whether every scenario runs on every store at hand: asked for, or only one store there. */
export function everyStoreRunsAll(env: NodeJS.ProcessEnv): boolean {
  return env.NAVI_TEST_STORES === 'both' || !env.DATABASE_URL;
}
