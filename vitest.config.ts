import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The logic tiers: no built CLI, no database (PGlite or server) — `npm run test:unit`, seconds.
 * `npm test` runs these and every end-to-end tier (scenario, loop-scenario, faults, fuzz, security,
 * tty, store).
 */
const UNIT = [
  'test/unit/**/*.test.ts',
  'test/agent/**/*.test.ts',
  'test/llm/**/*.test.ts',
  'test/loop/**/*.test.ts',
  'test/loop-runner/pieces.test.ts',
  'test/planning/**/*.test.ts',
  'test/tools/**/*.test.ts',
  'test/config/**/*.test.ts',
  'test/compression/**/*.test.ts',
  'test/user-tools/**/*.test.ts',
  'test/mcp/**/*.test.ts',
  'test/store/lock.test.ts',
  'test/report/**/*.test.ts',
  'test/queue/rules.test.ts',
  'test/queue/loop-request.test.ts',
  'test/serve/request-guard.test.ts',
  'test/serve/serve-rules.test.ts',
  'test/queue/trust-rules.test.ts',
  'test/serve-page/*-model.test.ts',
];
/** Inside those folders, but runs the built CLI on both backends. */
const NOT_UNIT = ['test/config/keep-alive-wire.test.ts'];

/**
 * Does navi work on this Node version (issue 40): the logic tiers, the store's contract tests (PGlite, and
 * PostgreSQL with DATABASE_URL), a smoke run of every command and the installed bin's caches (which differ by
 * Node version). `.ci/run` runs it on Node 24 beside
 * `npm test` on the machine's Node; `npm run test:compat`, or on another Node:
 * `NAVI_TIER=compat "$(.ci/node-bin 24)" node_modules/vitest/vitest.mjs run`.
 */
const COMPAT = [...UNIT, 'test/store/*.test.ts', 'test/smoke/**/*.test.ts', 'test/cli/package-install.test.ts'];

/**
 * NAVI_TIER: unset → everything (`npm test`); `unit` → UNIT; `compat` → COMPAT; `stress` → heavy,
 * timing-driven versions of races (`test/stress/*.stress.ts`, `npm run test:stress`), never part of `npm test`.
 */
const tier = process.env.NAVI_TIER;
const TIERS: Record<string, string[]> = { unit: UNIT, compat: COMPAT, stress: ['test/stress/**/*.stress.ts'] };
if (tier && !(tier in TIERS)) throw new Error(`NAVI_TIER=${tier}: not a tier (${Object.keys(TIERS).join(', ')}; unset for everything)`);
const include = tier ? (TIERS[tier] ?? []) : ['src/**/*.test.ts', 'test/**/*.test.ts'];

export default defineConfig({
  test: {
    include,
    exclude: [...configDefaults.exclude, ...(tier === 'unit' || tier === 'compat' ? NOT_UNIT : [])],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Scenario tests spawn the built CLI and open databases, so the suite is CPU-bound; with one
    // worker per core ~15% of the CPU still sat idle (each worker also waits on its processes'
    // start-up, I/O and timers), so one more worker than the 2 cores CI has.
    maxWorkers: 3,
    // One module graph per worker, not per file: no test file needs a fresh one (none mocks a
    // module; those that touch the environment, timers or process listeners restore them), and a
    // new graph per file was half of `npm run test:unit`'s CPU (40.7 → 21 s, 34 → 23 s wall).
    isolate: false,
  },
});
