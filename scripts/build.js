// @ts-check
/**
 * `npm run build`: bundles navi with esbuild into dist/ (tsc only type-checks: `npm run typecheck`).
 *
 * Why a bundle: a one-shot `navi run` spent most of its start-up in Node's ESM loader —
 * resolving, reading and compiling ~330 files (ours and our dependencies'). Bundled, it loads
 * about 55 (SPEC §12; measurements in README "Development").
 *
 * Layout:
 * - `dist/cli/main.cjs` — the bin (src/cli/main.cts, not bundled): answers `--version` before
 *   anything else loads, otherwise loads `run-entry.cjs` with its own V8 code cache, on every Node
 *   version (or, for a bare command word, `./app.js` directly, with Node's compile cache on where
 *   Node has one, 22.1 and later).
 * - `dist/cli/run-entry.cjs` — the `navi run` path (src/cli/run-entry.ts) as one CommonJS file,
 *   minified and ASCII-only (README "Performance"): one file to read, one script for the code
 *   cache, which main.cjs writes after a run so that it holds every function the run compiled
 *   (Node's compile cache holds only what compiling the file made: ~25 ms slower a one-shot run
 *   on Node 22 and 24). Its `import()`s are inlined (evaluated only when reached); the one left,
 *   for files and packages named at run time, goes through main.cjs (src/dynamic-import.ts). It
 *   hands every other invocation to `app.js`. `NAVI_BUILD_META=file` writes its esbuild metafile
 *   (what is in it).
 * - `dist/cli/app.js` — the CLI (src/cli/app.ts), an ES module bundle with code splitting:
 *   every `import()` in the sources stays a lazy boundary, so yargs loads only when the
 *   fast path of `navi run` falls back, PGlite or postgres.js only when used, loop mode only
 *   for loop runs. Shared code and lazy modules live in `dist/chunks/`.
 * - `dist/store/open.js` — a second entry point, for bench/ (seeds databases in-process).
 * - `dist/cli/node-support.cjs` — the bin's check of the Node.js version (src/cli/node-support.cjs).
 * - `dist/store/wasm-baseline.cjs` — the V8 flags for PGlite's WebAssembly, set by the bin and the
 *   worker thread (src/store/wasm-baseline.cjs).
 * - `dist/store/pglite-worker-thread.cjs` — the PGlite worker thread's code
 *   (src/store/pglite-worker-thread.cjs, plain CommonJS that also runs unbuilt under vitest), its
 *   own entry, not bundled: it requires only Node's modules and PGlite by path. The bundle finds it
 *   under dist/ because `NAVI_BUNDLED` is defined (src/store/pglite-worker.ts).
 * - `dist/modules.json` — which file holds each lazily loaded module (for bench/profile.ts).
 * - `*.map` — source maps without sources (src/ paths and lines); main.cjs turns them on
 *   when NAVI_DEBUG is set, and Node reads none otherwise.
 *
 * `@electric-sql/pglite` stays external: it loads its .wasm and .data from beside its own files.
 * `ws` (navi serve's WebSockets, loaded lazily) stays external too: it is CommonJS that require()s
 * Node's modules, which an ES module bundle cannot; Node loads it through its own ESM wrapper.
 *
 * `import.meta.url`: every output file sits two levels below the package root (checked below),
 * and each bundled module's `import.meta.url` is rewritten to the URL its source file has in
 * the package (`<root>/src/cli/app.ts`, `<root>/node_modules/yargs/…`), computed from the
 * output file's own URL. Relative paths (src/package-root.ts, yargs' locales) therefore resolve
 * as they do when the sources run under tsx or vitest.
 */
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { Buffer } from 'node:buffer';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { fileURLToPath, pathToFileURL, URL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = path.join(ROOT, 'src');
const DIST = path.join(ROOT, 'dist');
const TEMPLATE = path.join(DIST, 'pgdata-template.tar.gz');
/** Depth of every ES module output below the package root: dist/cli, dist/store, dist/chunks. */
const OUTPUT_DEPTH = 2;

/**
 * `import.meta.url` of a module → the URL of its source file in the package (see the header).
 * @type {import('esbuild').Plugin}
 */
const sourceUrls = {
  name: 'source-urls',
  setup(b) {
    b.onLoad({ filter: /\.(?:[cm]?ts|[cm]?js)$/ }, async ({ path: file }) => {
      const text = await fs.promises.readFile(file, 'utf8');
      if (!text.includes('import.meta')) return undefined;
      const rel = packageRelative(file);
      // dirname/filename would name the output file; resolve() is left alone (bare specifiers
      // resolve alike from the output file; yargs uses it for config `extends`, which navi never sets).
      const other = (rel.startsWith('src/') ? /\bimport\.meta\.(?!url\b)(\w+)/ : /\bimport\.meta\.(dirname|filename)\b/).exec(text);
      if (other) throw new Error(`${rel}: import.meta.${other[1]} is not supported in the bundle; use src/package-root.ts or import.meta.url`);
      const url = `new URL(${JSON.stringify(`${'../'.repeat(OUTPUT_DEPTH)}${rel}`)}, import.meta.url).href`;
      return { contents: text.replace(/\bimport\.meta\.url\b/g, url), loader: /\.[cm]?ts$/.test(file) ? 'ts' : 'js', resolveDir: path.dirname(file) };
    });
  },
};

/**
 * zod's `locales` namespace (~300 KiB: error messages in 40-odd languages) hangs off the `z`
 * object, so no bundler can drop it, yet navi only ever uses zod's default English messages
 * (which zod imports from locales/en.js itself). Compiling the rest cost ~20 ms of CPU on every
 * `navi run` (about a tenth of loading the run path). In the bundle `z.locales` keeps its names;
 * every language but English throws when called.
 * @type {import('esbuild').Plugin}
 */
const englishZodLocalesOnly = {
  name: 'english-zod-locales-only',
  setup(b) {
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, async ({ path: file }) => {
      const text = await fs.promises.readFile(file, 'utf8');
      /** @type {string[]} */
      const names = [];
      for (const line of text.split('\n').filter((l) => l.trim() !== '')) {
        const m = /^export \{ default as (\w+) \} from "\.\/[\w-]+\.js";$/.exec(line.trim());
        if (!m?.[1]) throw new Error(`${file}: unexpected line ${JSON.stringify(line)}; update the english-zod-locales-only plugin`);
        names.push(m[1]);
      }
      if (!names.includes('en')) throw new Error(`${file}: no English locale; update the english-zod-locales-only plugin`);
      const contents = names
        .map((n) =>
          n === 'en'
            ? 'export { default as en } from "./en.js";'
            : `export function ${n}() { throw new Error("zod locale '${n}' is not in navi's bundle (scripts/build.js)"); }`,
        )
        .join('\n');
      return { contents, loader: 'js', resolveDir: path.dirname(file) };
    });
  },
};

/**
 * `string-width` (yargs, cliui and ora measure text with it) builds four Unicode-property regular
 * expressions and an `Intl.Segmenter` when its module loads: ~30 ms of every start that loads
 * yargs, for text — help, tables, spinner frames — that is almost always printable ASCII. In the
 * bundle every import of it gets this wrapper: printable ASCII is one column a character, which
 * is what string-width answers for it whatever the options; anything else loads the real module
 * (the version that importer resolves) on first use and asks it.
 */
const ASCII_WIDTH_REAL = Symbol('the real string-width');
/** @type {import('esbuild').Plugin} */
const asciiWidthFirst = {
  name: 'ascii-width-first',
  setup(b) {
    b.onResolve({ filter: /^string-width$/ }, async ({ importer, resolveDir, kind, namespace, pluginData }) => {
      if (namespace === 'ascii-width-first' || pluginData === ASCII_WIDTH_REAL) return undefined;
      const real = await b.resolve('string-width', { importer, resolveDir, kind, namespace: 'file', pluginData: ASCII_WIDTH_REAL });
      if (real.errors.length > 0) return { errors: real.errors };
      return { path: real.path, namespace: 'ascii-width-first' };
    });
    b.onLoad({ filter: /.*/, namespace: 'ascii-width-first' }, ({ path: real }) => ({
      contents: `let real;
export default function stringWidth(text, options) {
  if (typeof text === "string" && /^[\\x20-\\x7e]*$/.test(text)) return text.length;
  real ??= require(${JSON.stringify(real)}).default;
  return real(text, options);
}`,
      loader: 'js',
      resolveDir: path.dirname(real),
    }));
  },
};

/**
 * drizzle-orm's pglite driver imports `@electric-sql/pglite` for four type OIDs and to construct
 * a client when given none. navi always hands it a client (the worker's, src/store/open.ts), so
 * in the run bundle that import is this small module: loading PGlite's 500 KB of JavaScript on
 * the main thread (a `require` in a CommonJS bundle, blocking) is left to the worker thread.
 * The OIDs are PostgreSQL's own and never change.
 * @type {import('esbuild').Plugin}
 */
const pgliteTypesOnly = {
  name: 'pglite-types-only',
  setup(b) {
    b.onResolve({ filter: /^@electric-sql\/pglite$/ }, ({ importer }) =>
      /[\\/]drizzle-orm[\\/]pglite[\\/]/.test(importer) ? { path: 'pglite-types', namespace: 'pglite-types-only' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'pglite-types-only' }, () => ({
      contents: `export const types = { TIMESTAMP: 1114, TIMESTAMPTZ: 1184, INTERVAL: 1186, DATE: 1082 };
export class PGlite { constructor() { throw new Error("navi's bundle hands drizzle a PGlite client (scripts/build.js)"); } }`,
      loader: 'js',
    }));
  },
};

/**
 * esbuild's `charset: 'ascii'` escapes strings and identifiers but leaves regular expression
 * literals as written (`/— (\\d+)/`). Every character above U+007F left is written as `\\uXXXX`
 * (UTF-16 units, which is what such an escape means in a string, a template and a regular
 * expression without the `u` flag; with it, a surrogate pair of escapes matches the same
 * character).
 * @param {string} text
 */
function asciiOnly(text) {
  return Buffer.from(text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`), 'latin1');
}

/**
 * A file's path inside the package, `/`-separated (node_modules may be a symlink elsewhere).
 * @param {string} file absolute path
 */
function packageRelative(file) {
  const rel = path.relative(ROOT, file).split(path.sep).join('/');
  if (!rel.startsWith('../')) return rel;
  const nm = file.split(path.sep).join('/').indexOf('/node_modules/');
  if (nm < 0) throw new Error(`${file} is outside the package`);
  return file.split(path.sep).join('/').slice(nm + 1);
}

/**
 * Replaces dist/ file by file: each changed file is renamed into place (a reader never sees half
 * a file), unchanged ones are left alone and stale ones removed last. A navi already running
 * from dist/ (tests of another checkout user, a long loop run) keeps finding its lazy chunks,
 * whose names hash their contents, unless they changed.
 * @param {Map<string, Uint8Array>} files absolute path → contents
 */
function writeDist(files) {
  for (const [file, contents] of files) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    let same = false;
    try {
      same = Buffer.from(contents).equals(fs.readFileSync(file));
    } catch {
      // missing: write it
    }
    if (same) continue;
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, contents);
    fs.renameSync(tmp, file);
  }
  /** @param {string} dir */
  const sweep = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        sweep(p);
        if (fs.readdirSync(p).length === 0) fs.rmdirSync(p);
      } else if (!files.has(p)) fs.rmSync(p, { force: true });
    }
  };
  sweep(DIST);
}

const started = performance.now();

/** @type {import('esbuild').BuildOptions} */
const common = { absWorkingDir: ROOT, platform: 'node', target: 'node20', charset: 'utf8', logLevel: 'warning', write: false };

// The run path (see the header): one CommonJS file, minified and ASCII-only.
const runEntry = await build({
  ...common,
  charset: 'ascii',
  minify: true,
  entryPoints: [path.join(SRC, 'cli/run-entry.ts')],
  outfile: path.join(DIST, 'cli/run-entry.cjs'),
  bundle: true,
  format: 'cjs',
  external: ['@electric-sql/pglite'],
  // sourceUrls writes `import.meta.url`, which CommonJS lacks: the file's own URL, set by the banner.
  define: { NAVI_BUNDLED: 'true', 'import.meta.url': '__navi_import_meta_url' },
  banner: { js: 'var __navi_import_meta_url=require("url").pathToFileURL(__filename).href;' },
  sourcemap: 'linked',
  sourcesContent: false,
  metafile: true,
  plugins: [englishZodLocalesOnly, pgliteTypesOnly, asciiWidthFirst, sourceUrls],
});
if (process.env.NAVI_BUILD_META) fs.writeFileSync(process.env.NAVI_BUILD_META, JSON.stringify(runEntry.metafile));
const runEntryOut = runEntry.outputFiles?.find((f) => f.path.endsWith('.cjs'));
if (!runEntryOut) throw new Error('build: esbuild wrote no run-entry.cjs');
const runEntryCode = { path: runEntryOut.path, contents: asciiOnly(runEntryOut.text) };

// The bin: CommonJS (Node 20 loads it faster than an ES module), nothing bundled into it. It
// names its code cache by the hash of run-entry.cjs (src/cli/main.cts).
const bin = await build({
  ...common,
  entryPoints: [path.join(SRC, 'cli/main.cts')],
  outfile: path.join(DIST, 'cli/main.cjs'),
  format: 'cjs',
  define: {
    NAVI_RUN_ENTRY_HASH: JSON.stringify(createHash('sha256').update(runEntryCode.contents).digest('hex').slice(0, 16)),
    NAVI_COMMANDS: JSON.stringify(commandWords()),
  },
});

/**
 * The top-level command words (`COMMANDS` in src/cli/shorthand.ts), for the bin, which is not
 * bundled: with global flags first (`navi --ollama-host URL loop …`) it finds the command word
 * and loads the full CLI at once instead of the run path first.
 * @returns {string[]}
 */
function commandWords() {
  const file = path.join(SRC, 'cli/shorthand.ts');
  const m = /^export const COMMANDS = (\[[^\]]*\]) as const;$/m.exec(fs.readFileSync(file, 'utf8'));
  if (!m?.[1]) throw new Error(`build: no \`export const COMMANDS = [...] as const;\` line in ${file}`);
  /** @type {unknown} */
  const words = JSON.parse(m[1].replace(/'/g, '"'));
  if (!Array.isArray(words) || !words.includes('run') || !words.every((w) => typeof w === 'string')) throw new Error(`build: COMMANDS in ${file} is not a list of words with 'run'`);
  return words;
}

const result = await build({
  ...common,
  entryPoints: [path.join(SRC, 'cli/app.ts'), path.join(SRC, 'store/open.ts'), path.join(SRC, 'store/pgdata-template.ts')],
  outbase: SRC,
  outdir: DIST,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  // pg-boss and cron-parser (the job queue, src/queue/) stay external too: CommonJS that requires
  // modules by name (pg's optional native driver, fs), which an ES bundle cannot. Loaded lazily.
  // ws (navi serve's WebSocket stack) likewise: it requires optional native helpers by name.
  external: ['@electric-sql/pglite', 'pg-boss', 'cron-parser', 'ws'],
  define: { NAVI_BUNDLED: 'true' },
  sourcemap: 'linked',
  sourcesContent: false,
  metafile: true,
  plugins: [englishZodLocalesOnly, pgliteTypesOnly, asciiWidthFirst, sourceUrls],
});

// The worker thread's code (see the header): a CommonJS script of its own, run by new Worker(path).
const worker = await build({
  ...common,
  // The wire server (serving the database to other processes) is required by the worker at run time;
  // wasm-baseline.cjs by the worker and by the bin (dist/cli/main.cjs requires ../store/wasm-baseline.cjs).
  // cli/node-support.cjs is the bin's version check (dist/cli/main.cjs requires ./node-support.cjs).
  entryPoints: ['store/pglite-worker-thread.cjs', 'store/pglite-wire-server.cjs', 'store/wasm-baseline.cjs', 'cli/node-support.cjs'].map((f) => path.join(SRC, f)),
  outbase: SRC,
  outdir: DIST,
  outExtension: { '.js': '.cjs' },
  format: 'cjs',
  sourcemap: 'linked',
  sourcesContent: false,
});

/** @type {string[]} */
const problems = [];
/** @type {Record<string, string>} */
const modules = {};
let bytes = 0;
let files = 0;
for (const [out, info] of Object.entries(result.metafile.outputs)) {
  if (out.endsWith('.map')) continue;
  files += 1;
  bytes += info.bytes;
  const rel = path.relative(DIST, path.resolve(ROOT, out)).split(path.sep).join('/');
  if (rel.split('/').length !== OUTPUT_DEPTH) problems.push(`${rel}: not ${OUTPUT_DEPTH} levels below the package root (import.meta.url rewriting assumes it)`);
  if (info.entryPoint) modules[packageRelative(path.resolve(ROOT, info.entryPoint))] = rel;
}
// V8 stores a source with one character above U+007F as two bytes a character: the run path's
// file would take 2–4 times as long to read (README "Performance").
const nonAscii = runEntryCode.contents.findIndex((byte) => byte > 0x7f);
if (nonAscii >= 0) problems.push(`cli/run-entry.cjs: a non-ASCII byte at offset ${nonAscii}`);
for (const [input, info] of Object.entries(result.metafile.inputs)) {
  for (const imp of info.imports) {
    // An external require() inside an ES module bundle throws "Dynamic require … is not supported".
    if (imp.external && (imp.kind === 'require-call' || imp.kind === 'require-resolve')) problems.push(`${input}: require('${imp.path}') of an external module`);
  }
}
if (problems.length > 0) {
  process.stderr.write(`build: the bundle would not work:\n  ${problems.join('\n  ')}\n`);
  process.exit(1);
}
fs.mkdirSync(DIST, { recursive: true });
/** @type {Map<string, Uint8Array>} */
const out = new Map([...(bin.outputFiles ?? []), ...(runEntry.outputFiles ?? []).filter((f) => f !== runEntryOut), runEntryCode, ...(worker.outputFiles ?? []), ...(result.outputFiles ?? [])].map((f) => [f.path, f.contents]));
out.set(path.join(DIST, 'modules.json'), Buffer.from(`${JSON.stringify(modules, null, 1)}\n`));
const template = cachedTemplate();
if (template.bytes) out.set(TEMPLATE, template.bytes);
writeDist(out);
process.stdout.write(`dist/: ${files + 5} files, ${(bytes / 1024).toFixed(0)} KiB of JavaScript, in ${(performance.now() - started).toFixed(0)} ms\n`);
if (!template.bytes) makeTemplate(template.cache);

/**
 * The migrated PGlite data directory new stores are unpacked from (src/store/pgdata-template.ts),
 * `dist/pgdata-template.tar.gz`. Making one runs initdb inside WebAssembly (~3–5 s), so it is
 * kept in node_modules/.cache, keyed by everything it depends on: PGlite's version, the
 * migrations, and the packing code.
 */
function cachedTemplate() {
  const hash = createHash('sha256');
  hash.update(fs.readFileSync(path.join(ROOT, 'node_modules/@electric-sql/pglite/package.json')));
  const drizzle = path.join(ROOT, 'drizzle');
  for (const f of fs.readdirSync(drizzle, { recursive: true, encoding: 'utf8' }).sort()) {
    const p = path.join(drizzle, f);
    if (fs.statSync(p).isFile()) hash.update(`${f}\0`).update(fs.readFileSync(p));
  }
  hash.update(fs.readFileSync(path.join(SRC, 'store/pgdata-template.ts')));
  const cache = path.join(ROOT, 'node_modules/.cache/navi', `pgdata-template-${hash.digest('hex').slice(0, 16)}.tar.gz`);
  try {
    return { cache, bytes: fs.readFileSync(cache) };
  } catch {
    return { cache, bytes: undefined };
  }
}

/**
 * Makes the template with the freshly built store code (initdb, migrations, a clean close) in a
 * child process, caches it and puts it in dist/. A failure only costs users the slower first run
 * (navi falls back to initdb): it is reported, not fatal.
 * @param {string} cache
 */
function makeTemplate(cache) {
  const t0 = performance.now();
  const script = `
    import fs from 'node:fs'; import os from 'node:os'; import path from 'node:path';
    const { migrateDatabase } = await import(${JSON.stringify(pathToFileURL(path.join(DIST, 'store/open.js')).href)});
    const { packDataDir } = await import(${JSON.stringify(pathToFileURL(path.join(DIST, 'store/pgdata-template.js')).href)});
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'navi-template-'));
    try {
      const dataDir = path.join(tmp, 'pgdata');
      await migrateDatabase({ dataDir, useTemplate: false });
      fs.writeFileSync(process.argv[1], packDataDir(dataDir));
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }`;
  const tmpOut = `${cache}.${process.pid}.tmp`;
  fs.mkdirSync(path.dirname(cache), { recursive: true });
  const made = spawnSync(process.execPath, ['--input-type=module', '-e', script, tmpOut], { cwd: ROOT, encoding: 'utf8' });
  if (made.status !== 0) {
    fs.rmSync(tmpOut, { force: true });
    process.stderr.write(`build: warning: no PGlite template (first runs will run initdb): ${(made.stderr || made.error?.message || '').trim().split('\n').slice(-3).join(' / ')}\n`);
    return;
  }
  fs.renameSync(tmpOut, cache);
  fs.copyFileSync(cache, TEMPLATE);
  process.stdout.write(`dist/pgdata-template.tar.gz: ${(fs.statSync(TEMPLATE).size / 1024).toFixed(0)} KiB, made in ${(performance.now() - t0).toFixed(0)} ms (cached for the next build)\n`);
}
