// @ts-check
/**
 * `npm run lint` (before eslint): fails on an import cycle in src/ or an import that points up
 * the layers (AGENTS.md "Layout and direction of dependencies").
 *
 * Why a script and not eslint-plugin-import-x or dependency-cruiser: the rules are two (no
 * cycles, an allow-list of folders); the TypeScript scanner we already depend on lists a
 * file's imports without a full parse (`ts.preProcessFile`: static imports, `import type`,
 * `export … from` and `import()` alike), so the check takes about a second and adds no package.
 * (`import-x/no-cycle` skips type-only imports by default — it missed two of the three cycles
 * this script was written to remove — and added ~15 s of CPU to lint.)
 *
 * Every import counts, type-only and lazy ones included: a type cycle is still two files that
 * cannot be understood apart, and a lazy upward import is still an upward dependency.
 *
 * Then the test tiers (issue 36, scripts/test-tiers.js): a `*.unit.test.ts` — what
 * `npm run test:unit` runs — must reach no built CLI, database or browser through the names it
 * imports, and a `*.test.ts` that reaches none must be named `*.unit.test.ts`.
 */
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import ts from 'typescript';
import { tierProblems } from './test-tiers.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = path.join(ROOT, 'src');

/**
 * Which layers each layer may import besides itself (within a layer, only cycles are checked).
 * `base` is the bottom: the files directly in src/ (errors, prompts, package-root, timers) and
 * src/util/. Nothing may import `cli`. The lower folders import each other only where they did
 * when this was written, which is acyclic: profiles → config → tools → llm, store → tools, llm.
 * @type {Record<string, readonly string[]>}
 */
const MAY_IMPORT = {
  base: [],
  // --sandbox (issue 22): modes and the bubblewrap/sandbox-exec spawn; under tools and config.
  sandbox: ['base'],
  llm: ['base'],
  tools: ['base', 'llm', 'sandbox'],
  config: ['base', 'tools', 'sandbox'],
  profiles: ['base', 'config'],
  store: ['base', 'llm', 'tools'],
  mcp: ['base', 'tools', 'config'],
  agent: ['base', 'llm', 'tools', 'config', 'profiles', 'store', 'mcp', 'sandbox'],
  notify: ['base', 'config'],
  loop: ['base', 'llm', 'tools', 'config', 'profiles', 'store', 'agent', 'mcp', 'sandbox', 'notify'],
  report: ['base', 'store'],
  // The job queue (pg-boss): its own tables and SQL; the store only for the database URL's shape;
  // loop only for the loop request a job carries (loop/loop-request.ts) and turns into `navi loop`.
  queue: ['base', 'store', 'loop'],
  // navi serve: one more front end on the agent core; cli/ imports it lazily.
  serve: ['base', 'llm', 'tools', 'config', 'profiles', 'store', 'agent', 'loop', 'mcp', 'report', 'sandbox', 'notify'],
  cli: ['base', 'llm', 'tools', 'config', 'profiles', 'store', 'agent', 'loop', 'mcp', 'report', 'sandbox', 'notify', 'queue', 'serve'],
};

/** @param {string} file path relative to src/ @returns {string} */
function layerOf(file) {
  const top = file.split('/')[0] ?? '';
  return !file.includes('/') || top === 'util' ? 'base' : top;
}

const files = fs
  .readdirSync(SRC, { recursive: true, encoding: 'utf8' })
  .map((f) => f.split(path.sep).join('/'))
  .filter((f) => /\.[cm]?ts$/.test(f) && !f.endsWith('.d.ts') && !/\.test\.[cm]?ts$/.test(f))
  .sort();
const known = new Set(files);

/** @param {string} from @param {string} spec @returns {string | undefined} */
function resolve(from, spec) {
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
  const stem = base.replace(/\.[cm]?js$/, '');
  return [base, `${stem}.ts`, `${stem}.cts`, `${stem}.mts`, `${stem}/index.ts`].find((c) => known.has(c));
}

/** @type {string[]} */
const problems = [];
/** @type {Map<string, string[]>} */
const graph = new Map();
for (const file of files) {
  const text = fs.readFileSync(path.join(SRC, file), 'utf8');
  const targets = new Set();
  for (const imp of ts.preProcessFile(text, true, true).importedFiles) {
    if (!imp.fileName.startsWith('.')) continue;
    const target = resolve(file, imp.fileName);
    if (target === undefined) continue; // outside src/ or missing: tsc reports the latter
    targets.add(target);
    const [from, to] = [layerOf(file), layerOf(target)];
    const allowed = MAY_IMPORT[from] ?? [];
    if (from !== to && !allowed.includes(to)) {
      const line = text.slice(0, imp.pos).split('\n').length;
      problems.push(
        `src/${file}:${line} imports src/${target}: ${from} may import only ${allowed.join(', ') || 'base'} (upward import; see MAY_IMPORT in scripts/check-imports.js)`,
      );
    }
  }
  graph.set(file, [...targets]);
}

// Tarjan's strongly connected components; every component of more than one file is a cycle.
let counter = 0;
/** @type {Map<string, number>} */ const index = new Map();
/** @type {Map<string, number>} */ const low = new Map();
/** @type {string[]} */ const stack = [];
const onStack = new Set();
/** @type {string[][]} */ const components = [];
/** @param {string} v */
function connect(v) {
  index.set(v, counter);
  low.set(v, counter++);
  stack.push(v);
  onStack.add(v);
  for (const w of graph.get(v) ?? []) {
    if (!index.has(w)) {
      connect(w);
      low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
  }
  if (low.get(v) !== index.get(v)) return;
  /** @type {string[]} */ const component = [];
  let w;
  do {
    w = stack.pop() ?? v;
    onStack.delete(w);
    component.push(w);
  } while (w !== v);
  if (component.length > 1 || (graph.get(v) ?? []).includes(v)) components.push(component.sort());
}
for (const file of files) if (!index.has(file)) connect(file);

/** The shortest path from `start` back to itself inside one component (breadth first). */
function shortestCycle(/** @type {string} */ start, /** @type {Set<string>} */ within) {
  /** @type {Map<string, string>} */ const parent = new Map();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i] ?? start;
    for (const w of graph.get(v) ?? []) {
      if (!within.has(w)) continue;
      if (w === start) {
        const cycle = [start];
        for (let u = v; u !== start; u = parent.get(u) ?? start) cycle.unshift(u);
        return [start, ...cycle];
      }
      if (!parent.has(w)) {
        parent.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}
for (const component of components) {
  const cycle = shortestCycle(component[0] ?? '', new Set(component));
  const rest = component.length > cycle.length - 1 ? ` (${component.length} files in this knot: ${component.map((f) => `src/${f}`).join(', ')})` : '';
  problems.push(`import cycle: ${cycle.map((f) => `src/${f}`).join(' → ')}${rest}`);
}

const testFiles = ['src', 'test']
  .flatMap((dir) => fs.readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' }).map((f) => `${dir}/${f.split(path.sep).join('/')}`))
  .filter((f) => /\.test\.[cm]?ts$/.test(f))
  .sort();
/** @param {string} file @returns {string | undefined} */
function readRepoFile(file) {
  try {
    return fs.readFileSync(path.join(ROOT, file), 'utf8');
  } catch {
    return undefined;
  }
}
problems.push(...tierProblems(testFiles, readRepoFile));

if (problems.length > 0) {
  process.stderr.write(`${problems.join('\n')}\ncheck-imports: ${problems.length} problem(s) in ${files.length} files of src/ and ${testFiles.length} test files\n`);
  process.exitCode = 1;
}
