import { defineConfig } from 'vitest/config';

/**
 * The unit tier, by name: `*.unit.test.ts` is a test that reaches no built CLI, no database (PGlite or
 * server) and no browser — `npm run test:unit`, seconds. `scripts/check-imports.js` (`npm run lint`)
 * holds the name to that both ways (scripts/test-tiers.js): a unit file that reaches one fails, and so does
 * a `*.test.ts` that reaches none. `npm test` runs these and every end-to-end tier (scenario,
 * loop-scenario, faults, fuzz, security, tty, store).
 */
const UNIT = ['src/**/*.unit.test.ts', 'test/**/*.unit.test.ts'];

/**
 * Does navi work on this Node version (issue 40): the unit tier, the store's contract tests (PGlite, and
 * PostgreSQL with DATABASE_URL), a smoke run of every command and the installed bin's caches (which differ by
 * Node version). `.ci/run` runs it on Node 24 beside
 * `npm test` on the machine's Node; `npm run test:compat`, or on another Node:
 * `NAVI_TIER=compat "$(.ci/node-bin 24)" node_modules/vitest/vitest.mjs run`.
 */
const COMPAT = [...UNIT, 'test/store/*.test.ts', 'test/smoke/**/*.test.ts', 'test/cli/package-install.test.ts'];

/**
 * NAVI_TIER: unset → everything (`npm test`); `unit` → UNIT (`*.unit.test.ts`); `compat` → COMPAT; `stress` → heavy,
 * timing-driven versions of races (`test/stress/*.stress.ts`, `npm run test:stress`), never part of `npm test`.
 */
const tier = process.env.NAVI_TIER;
const TIERS: Record<string, string[]> = { unit: UNIT, compat: COMPAT, stress: ['test/stress/**/*.stress.ts'] };
if (tier && !(tier in TIERS)) throw new Error(`NAVI_TIER=${tier}: not a tier (${Object.keys(TIERS).join(', ')}; unset for everything)`);
const include = tier ? (TIERS[tier] ?? []) : ['src/**/*.test.ts', 'test/**/*.test.ts'];

export default defineConfig({
  test: {
    include,
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
