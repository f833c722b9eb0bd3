/**
 * The unit tier's rule (scripts/test-tiers.js, run by `npm run lint`): a test is unit when the names
 * it imports reach no built CLI, database or browser; `*.unit.test.ts` must be unit and every unit
 * test must be named so. Each row is a small tree of files in memory and the problems it gives.
 */
import { describe, expect, it } from 'vitest';
import { tierProblems } from '../../scripts/test-tiers.js';

/** A stand-in for test/support/cli.ts: `runNavi` runs the bundle; `REPO_ROOT` is a path, `bundleFromEnv` reads one. */
const CLI = [
  "import path from 'node:path';",
  "export const REPO_ROOT = '/repo';",
  "const CLI_PATH = path.join(REPO_ROOT, 'dist', 'cli', 'main' + '.cjs');",
  "const BUNDLE = path.join(REPO_ROOT, 'main.cjs');",
  'export function runNavi(args: string[]) { return [BUNDLE, CLI_PATH, ...args]; }',
  'export function bundleFromEnv() { return process.env.BUNDLE; }',
].join('\n');

/** A stand-in for src/store/open.ts: `openStore` loads a database driver, `isNaviDataDir` is pure. */
const OPEN = [
  'export function isNaviDataDir(names: string[]) { return names.includes("PG_VERSION"); }',
  "async function connect() { return import('postgres'); }",
  'export async function openStore() { return connect(); }',
].join('\n');

/** A stand-in for test/scenario/helpers.ts: `scenario` runs navi, `until` only waits. */
const HELPERS = [
  "import { runNavi } from '../support/cli.js';",
  'export function until(ok: () => boolean) { return ok(); }',
  'function start() { return runNavi([]); }',
  'export function scenario() { return start(); }',
].join('\n');

/** The usual files every row sees, beside its own. */
const BASE: Record<string, string> = {
  'test/support/cli.ts': CLI,
  'src/store/open.ts': OPEN,
  'test/scenario/helpers.ts': HELPERS,
  'test/loop-scenario/helpers.ts': "export { scenario, until } from '../scenario/helpers.js';",
};

/** The problems for one test file, by what each says first (`looks pure`, `must reach no`). */
function problemsFor(file: string, text: string, extra: Record<string, string> = {}): string[] {
  const files: Record<string, string> = { ...BASE, ...extra, [file]: text };
  return tierProblems([file], (f) => files[f]).map((p) => p.replace(/ \(.*$/s, ''));
}

const USES = (what: string): string => `it('x', () => { void ${what}; });`;

describe('which test files are unit', () => {
  it.each<[string, string, string, string[], Record<string, string>?]>([
    ['pure, named unit', 'test/a/x.unit.test.ts', `import { it } from 'vitest';\n${USES('1')}`, []],
    ['pure, not named unit', 'test/a/x.test.ts', `import { it } from 'vitest';\n${USES('1')}`, ['test/a/x.test.ts: looks pure']],
    ['runs the built CLI, named unit', 'test/a/x.unit.test.ts', `import { runNavi } from '../support/cli.js';\n${USES('runNavi')}`, ['test/a/x.unit.test.ts: a *.unit.test.ts must reach no built CLI, database or browser, but it uses runNavi']],
    ['runs the built CLI, not named unit', 'test/a/x.test.ts', `import { runNavi } from '../support/cli.js';\n${USES('runNavi')}`, []],
    ['only a path from the CLI helper', 'test/a/x.unit.test.ts', `import { REPO_ROOT } from '../support/cli.js';\n${USES('REPO_ROOT')}`, []],
    ['a property named like a heavy constant is no use of it', 'test/a/x.unit.test.ts', `import { bundleFromEnv } from '../support/cli.js';\n${USES('bundleFromEnv')}`, []],
    ['opens a store', 'test/a/x.test.ts', `import { openStore } from '../../src/store/open.js';\n${USES('openStore')}`, []],
    ['a pure function beside openStore', 'test/a/x.test.ts', `import { isNaviDataDir } from '../../src/store/open.js';\n${USES('isNaviDataDir')}`, ['test/a/x.test.ts: looks pure']],
    ['a type-only import of a heavy module', 'test/a/x.test.ts', `import type { openStore } from '../../src/store/open.js';\nlet f: typeof openStore;\n${USES('f')}`, ['test/a/x.test.ts: looks pure']],
    ['a helper that runs navi', 'test/a/x.unit.test.ts', `import { scenario } from '../scenario/helpers.js';\n${USES('scenario')}`, ['test/a/x.unit.test.ts: a *.unit.test.ts must reach no built CLI, database or browser, but it uses scenario']],
    ['a pure helper beside it', 'test/a/x.unit.test.ts', `import { until } from '../scenario/helpers.js';\n${USES('until')}`, []],
    ['through a re-export', 'test/a/x.unit.test.ts', `import { scenario } from '../loop-scenario/helpers.js';\n${USES('scenario')}`, ['test/a/x.unit.test.ts: a *.unit.test.ts must reach no built CLI, database or browser, but it uses scenario']],
    ['a pure name through a re-export', 'test/a/x.test.ts', `import { until } from '../loop-scenario/helpers.js';\n${USES('until')}`, ['test/a/x.test.ts: looks pure']],
    ['a destructured dynamic import', 'test/a/x.unit.test.ts', `it('x', async () => { const { runNavi } = await import('../support/cli.js'); void runNavi; });`, ['test/a/x.unit.test.ts: a *.unit.test.ts must reach no built CLI, database or browser, but it uses runNavi']],
    ['a pure name by dynamic import', 'test/a/x.unit.test.ts', `it('x', async () => { const { REPO_ROOT } = await import('../support/cli.js'); void REPO_ROOT; });`, []],
    ['the bundle named in the test itself', 'test/a/x.test.ts', `import { it } from 'vitest';\n${USES("'dist/cli/main.cjs'")}`, []],
    ['another dist/ path is no bundle', 'test/a/x.test.ts', `import { it } from 'vitest';\n${USES("'dist/agent/planning/prompts.js'")}`, ['test/a/x.test.ts: looks pure']],
    ['PGlite imported', 'test/a/x.unit.test.ts', `import { PGlite } from '@electric-sql/pglite';\n${USES('PGlite')}`, ['test/a/x.unit.test.ts: a *.unit.test.ts must reach no built CLI, database or browser, but it uses a database']],
    ['a browser, lazily', 'test/a/x.test.ts', `it('x', async () => { await import('playwright-core'); });`, []],
    ['a driver named in a call (a worker loads it)', 'test/a/x.test.ts', `import { startWorker } from '../../src/w.js';\n${USES('startWorker')}`, [], { 'src/w.ts': "export function startWorker() { return require.resolve('@electric-sql/pglite'); }" }],
    ['mutual recursion that reaches the CLI', 'test/a/x.test.ts', `import { a } from './h.js';\n${USES('a')}`, [], {
      'test/a/h.ts': "import { runNavi } from '../support/cli.js';\nexport function a(n: number): unknown { return n > 0 ? b(n) : 0; }\nfunction b(n: number): unknown { return n > 1 ? a(n - 1) : runNavi([]); }",
    }],
    ['a heavy class named only as a type', 'test/a/x.test.ts', `import { describeDb } from './h.js';\n${USES('describeDb')}`, ['test/a/x.test.ts: looks pure'], {
      'test/a/h.ts': "import { runNavi } from '../support/cli.js';\nexport class Db { open() { return runNavi([]); } }\nexport function describeDb(d: Db): string { return String(d); }",
    }],
  ])('%s', (_name, file, text, want, extra) => {
    expect(problemsFor(file, text, extra)).toEqual(want);
  });

  it('a name met inside a cycle is judged again once the cycle closes', () => {
    // `a` is judged first; inside it `b` meets `a` still open, so `b`'s "nothing" must not stick.
    const files: Record<string, string> = {
      ...BASE,
      'test/a/h.ts': "import { runNavi } from '../support/cli.js';\nexport function a(): unknown { return b() ?? runNavi([]); }\nexport function b(): unknown { return a(); }",
      'test/a/first.test.ts': `import { a } from './h.js';\n${USES('a')}`,
      'test/a/second.test.ts': `import { b } from './h.js';\n${USES('b')}`,
    };
    expect(tierProblems(['test/a/first.test.ts', 'test/a/second.test.ts'], (f) => files[f])).toEqual([]);
  });

  it('names the file, the rule and the way to fix it', () => {
    const [pure] = tierProblems(['test/a/x.test.ts'], (f) => (f === 'test/a/x.test.ts' ? 'export {};' : undefined));
    expect(pure).toBe('test/a/x.test.ts: looks pure (reaches no built CLI, database or browser): name it test/a/x.unit.test.ts so npm run test:unit runs it (scripts/test-tiers.js)');
    const files: Record<string, string> = { ...BASE, 'test/a/x.unit.test.ts': `import { scenario } from '../scenario/helpers.js';\n${USES('scenario')}` };
    expect(tierProblems(['test/a/x.unit.test.ts'], (f) => files[f])).toEqual([
      "test/a/x.unit.test.ts: a *.unit.test.ts must reach no built CLI, database or browser, but it uses scenario (test/scenario/helpers.ts) → start → runNavi (test/support/cli.ts) → BUNDLE → the built CLI: 'main.cjs' (test/support/cli.ts) (rename it *.test.ts, or pass a fake in; scripts/test-tiers.js)",
    ]);
  });
});
