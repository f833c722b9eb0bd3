#!/usr/bin/env node
/**
 * Entry point. CommonJS on purpose: `--version` is answered here before anything else is
 * loaded, because scripts call it in loops and it must cost little more than starting node
 * itself (SPEC §12) — and Node 20 loads a CommonJS file measurably faster than an ES module.
 *
 * Everything else starts in `run-entry.cjs` (src/cli/run-entry.ts: the `navi run` path as one
 * minified, ASCII-only CommonJS bundle, scripts/build.js), compiled with a V8 code cache, and the
 * other commands continue into the split ES module build (`app.js`). Two caches, both in the
 * user's cache directory (`$XDG_CACHE_HOME/navi` or `~/.cache/navi`; the package directory may be
 * read-only):
 * - the run entry's, kept by this file on every Node version: the bytecode V8 made for
 *   run-entry.cjs in an earlier run, written after the run compiled the functions it uses, which
 *   spares parsing and compiling them (~60–80 ms of a one-shot run; README "Performance"). Named by
 *   the build, Node's version and the V8 flags: V8 rejects a cache made under other flags, and a
 *   rejected or unreadable one is replaced. Node's own compile cache (`module.enableCompileCache`,
 *   Node ≥ 22.1) would do for it too, but it serialises a file's code when it is compiled, before
 *   any function in it has run, so a one-shot run loaded that way compiles the rest each time:
 *   ~25 ms slower on Node 22 and 24 (measured 2026-12-07, README "Performance").
 * - Node's compile cache, where Node has it, for the ES module build (`app.js`, its chunks and
 *   whatever they import): turned on when a command continues there.
 */
import fs = require('node:fs');
import Module = require('node:module');
import os = require('node:os');
import path = require('node:path');
import v8 = require('node:v8');
import vm = require('node:vm');
import type WorkerThreads = require('node:worker_threads');
import type Crypto = require('node:crypto');
import type WasmBaseline = require('../store/wasm-baseline.cjs');
import type NodeSupport = require('./node-support.cjs');

/** The first 16 hex digits of run-entry.cjs's SHA-256, set by scripts/build.js. */
declare const NAVI_RUN_ENTRY_HASH: string;
/** The top-level command words (`COMMANDS`, src/cli/shorthand.ts), set by scripts/build.js. */
declare const NAVI_COMMANDS: readonly string[];

/** When the young generation stops growing: after start-up, early in a long run. */
const YOUNG_GENERATION_FREEZE_MS = 500;

/** The digest in front of a code cache file's payload (`checkedPayload`): SHA-1, 20 bytes. */
const DIGEST_BYTES = 20;

/** Node's compile cache, inside navi's cache directory. */
const COMPILE_CACHE_DIR = 'compile-cache';

/** How long a cache nobody wrote to is kept: a build or Node version no longer used. */
const STALE_CACHE_MS = 30 * 24 * 3600 * 1000;

/** Where the PGlite worker started here waits to be adopted (src/store/pglite-worker.ts reads it). */
const EARLY_PGLITE_KEY = '__naviEarlyPglite';

/** Where the run entry finds this file's `import()` (src/dynamic-import.ts reads it). */
const IMPORT_KEY = '__naviImport';

interface FullCli {
  /** app.ts: parses and runs `args` with this process as the host, then exits with the code. */
  binMain(args: string[]): Promise<never>;
}

interface RunEntry {
  main(args: string[], loadFullCli: () => Promise<FullCli>): Promise<void>;
}

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
  process.stdout.write(`${pkg.version}\n`);
} else {
  const unsupported = (require('./node-support.cjs') as typeof NodeSupport).unsupportedNode(process.versions.node);
  if (unsupported !== null) {
    process.stderr.write(`navi: ${unsupported}\n`);
    process.exit(1);
  }
  // The CLI is a bundle (scripts/build.js): with NAVI_DEBUG, stack traces name src/ files and lines.
  if (process.env.NAVI_DEBUG) process.setSourceMapsEnabled(true);
  // The PGlite worker sets these flags for its WebAssembly, and flags are per process: set before
  // anything is compiled, every run has the same flags, so the code caches below stay valid.
  (require('../store/wasm-baseline.cjs') as typeof WasmBaseline).useBaselineWasmCompiler();
  // The run entry's own import() is unusable when it is compiled from a vm.Script: on Node 20 it
  // fails once the script comes from cached data ("A dynamic import callback was not specified"),
  // and on 22 and 24 it works but prints an ExperimentalWarning (vm.USE_MAIN_CONTEXT_DEFAULT_LOADER)
  // on every run. So it imports user tools, node:https… through this file's (src/dynamic-import.ts).
  (globalThis as Record<string, unknown>)[IMPORT_KEY] = (specifier: string): Promise<unknown> => import(specifier);
  startPgliteEarly(args);
  const cacheDir = naviCacheDirectory();
  const cache = codeCacheFile(cacheDir);
  let compileCache = false;
  // Start-up (module loading, opening PGlite) allocates fast and is quicker with room to do so.
  setTimeout(() => {
    // The run entry's cache is written before the flag changes: V8 checks the flags a cache was
    // made under. (Node's compile cache serialises each module as it compiles it, under the flags
    // of that moment, so it needs no flush first; flushed now, a long command killed later keeps
    // what its start-up compiled.)
    cache.save();
    if (compileCache) (Module as CompileCacheApi).flushCompileCache?.();
    keepYoungGenerationSmall();
  }, YOUNG_GENERATION_FREEZE_MS).unref();
  const fullCli = (): Promise<FullCli> => {
    // Another command: the cache is made by a run, so that it holds the run path's functions.
    cache.save = () => undefined;
    compileCache = enableCompileCache(cacheDir);
    return import('./app.js');
  };
  if (mayBeRun(args)) {
    let entry: RunEntry;
    try {
      entry = loadWithCodeCache(path.join(__dirname, 'run-entry.cjs'), cache) as RunEntry;
    } catch (err) {
      cannotLoad(err);
    }
    process.once('exit', () => cache.save());
    entry.main(args, fullCli).catch(cannotLoad);
  } else {
    fullCli().then((cli) => cli.binMain(args), cannotLoad);
  }
}

/**
 * Whether the arguments may be a `navi run` the run entry answers: `run …`, a prompt
 * (`navi "list the files"`), or flags first. A bare word is a command name (or a one-word
 * prompt, which the full CLI runs as well): it goes straight to the full CLI, without loading
 * the run path first. So do flags followed by another command's word (`navi --ollama-host URL
 * loop …`, as scripts write global flags); a flag value that happens to be a command word only
 * costs speed, as the full CLI parses every invocation the same way.
 */
function mayBeRun(argv: readonly string[]): boolean {
  const first = argv[0];
  if (first === undefined) return false;
  if (first === 'run') return true;
  if (first === '--help' || first === '-h') return false;
  if (/^[a-z][a-z-]*$/.test(first)) return false;
  const command = argv.find((a) => NAVI_COMMANDS.includes(a));
  return command === undefined || command === 'run';
}

function cannotLoad(err: unknown): never {
  process.stderr.write(`navi: cannot load the CLI: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}

/**
 * `navi run …` or `navi "prompt"` (global flags may come first) with neither `--db` nor
 * DATABASE_URL will open the embedded database: its worker thread (loading PGlite, compiling its
 * WebAssembly) starts now, before the CLI is even loaded, and the store adopts it
 * (`prewarmPglite`). A guess that turns out wrong (a PostgreSQL URL in the config file) is
 * stopped there; an unused worker holds nothing open.
 */
function startPgliteEarly(argv: readonly string[]): void {
  const first = argv[0] ?? '';
  // `navi run …`, `navi "prompt"`, or either after global flags (`navi --ollama-host URL run …`;
  // not flags alone, `navi -o json`, which is a usage error).
  const afterFlags = first.startsWith('-') && mayBeRun(argv) && argv.some((a) => a === 'run' || /\s/.test(a));
  if (!(first === 'run' || /\s/.test(first) || afterFlags) || process.env.DATABASE_URL) return;
  if (argv.some((a) => a === '--db' || a.startsWith('--db='))) return;
  let pgliteEntry: string;
  try {
    pgliteEntry = require.resolve('@electric-sql/pglite');
  } catch {
    return; // the store reports it when it opens
  }
  const { Worker } = require('node:worker_threads') as typeof WorkerThreads;
  const worker = new Worker(path.join(__dirname, '..', 'store', 'pglite-worker-thread.cjs'), { workerData: { pgliteEntry }, execArgv: [] });
  const early = { worker, dead: false };
  worker.on('error', () => (early.dead = true));
  worker.on('exit', () => (early.dead = true));
  worker.unref();
  (globalThis as Record<string, unknown>)[EARLY_PGLITE_KEY] = early;
}

interface CodeCache {
  file: string | null;
  data: Buffer | undefined;
  /** Writes a new cache once, when there was none or V8 rejected it. */
  save(): void;
  script?: vm.Script;
}

/** navi's cache directory, `$XDG_CACHE_HOME/navi` or `~/.cache/navi`; null without a home directory. */
function naviCacheDirectory(): string | null {
  const xdg = process.env.XDG_CACHE_HOME;
  try {
    return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.cache'), 'navi');
  } catch {
    return null; // no home directory: run without the caches
  }
}

/** The run entry's cache file in `dir` for this build, Node and V8 flags, and what it holds. */
function codeCacheFile(dir: string | null): CodeCache {
  const cache: CodeCache = { file: null, data: undefined, save: () => undefined };
  if (dir === null) return cache;
  const flags = fnv1a(`${process.execArgv.join('\0')}\0${process.env.NODE_OPTIONS ?? ''}`);
  cache.file = path.join(dir, `run-entry-${NAVI_RUN_ENTRY_HASH}-${process.version}-${process.arch}-${flags}.v8cache`);
  try {
    cache.data = checkedPayload(fs.readFileSync(cache.file));
  } catch {
    // none yet
  }
  return cache;
}

/** What main.cjs uses of Node's compile cache (Node ≥ 22.1; `flushCompileCache` from 22.10). */
interface CompileCacheApi {
  enableCompileCache?: (dir: string) => { status: number };
  flushCompileCache?: () => void;
  constants?: { compileCacheStatus?: { ENABLED: number; ALREADY_ENABLED: number } };
}

/**
 * Node's compile cache in `<dir>/compile-cache` (Node adds a directory per Node version, V8 flags
 * and user), where this Node has it. Node reads, checks and writes the cache files itself: one
 * that does not match its source, its checksum or V8's flags is recompiled and replaced. A
 * `NODE_COMPILE_CACHE` the user set wins; `NODE_DISABLE_COMPILE_CACHE=1` turns it off.
 */
function enableCompileCache(dir: string | null): boolean {
  const api = Module as CompileCacheApi;
  if (dir === null || typeof api.enableCompileCache !== 'function') return false;
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 }); // as private as the run entry's cache
  } catch {
    return false;
  }
  const { status } = api.enableCompileCache(path.join(dir, COMPILE_CACHE_DIR));
  const known = api.constants?.compileCacheStatus;
  return status === known?.ENABLED || status === known?.ALREADY_ENABLED;
}

/**
 * A cache file is the SHA-1 of the payload, then the payload: V8 checks a cache's version,
 * flags and source, but not its bytes, and a corrupted one crashes the process (a fatal error
 * in the deserializer) instead of being rejected. Undefined when the bytes do not match.
 */
function checkedPayload(file: Buffer): Buffer | undefined {
  if (file.length <= DIGEST_BYTES) return undefined;
  const payload = file.subarray(DIGEST_BYTES);
  return sha1(payload).equals(file.subarray(0, DIGEST_BYTES)) ? payload : undefined;
}

function sha1(data: Buffer): Buffer {
  const crypto = require('node:crypto') as typeof Crypto;
  return crypto.createHash('sha1').update(data).digest();
}

/**
 * Compiles and runs a CommonJS file as `require` would, with V8's code cache: the cached
 * bytecode when V8 accepts it, else a new cache written later (`save`), after the run compiled
 * the functions it uses, so the next run finds them compiled too.
 */
function loadWithCodeCache(file: string, cache: CodeCache): unknown {
  // ASCII-only (scripts/build.js): read as latin1, the cheapest decoding, and V8 keeps it one byte a character.
  const source = fs.readFileSync(file, 'latin1');
  const script = new vm.Script(Module.wrap(source), {
    filename: file,
    cachedData: cache.data,
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (cache.file !== null && (cache.data === undefined || script.cachedDataRejected === true)) {
    const target = cache.file;
    let saved = false;
    cache.save = () => {
      if (saved) return;
      saved = true;
      const payload = script.createCachedData();
      writeAtomically(target, Buffer.concat([sha1(payload), payload]));
      pruneStaleCaches(path.dirname(target), target);
    };
  }
  const mod = new Module(file, module);
  mod.filename = file;
  mod.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(path.dirname(file));
  const wrapper = script.runInThisContext() as (exports: unknown, req: NodeJS.Require, m: Module, filename: string, dirname: string) => void;
  wrapper.call(mod.exports, mod.exports, Module.createRequire(file), mod, file, path.dirname(file));
  mod.loaded = true;
  return mod.exports;
}

/** Write to a temporary name, then rename: a reader sees the old cache or the new, never half. Failures only cost speed. */
function writeAtomically(file: string, data: Buffer): void {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    fs.writeFileSync(tmp, data, { mode: 0o600 });
    fs.renameSync(tmp, file);
  } catch {
    try {
      fs.rmSync(tmp, { force: true });
    } catch {
      // nothing to clean up
    }
  }
}

/**
 * Each navi build and Node version leaves ~1 MB of caches (a run entry's file, a compile-cache
 * directory); when a new one is written, those not written for STALE_CACHE_MS go. One still in
 * use is only made again by its next run. Failures only leave files behind.
 */
function pruneStaleCaches(dir: string, keep: string): void {
  const before = Date.now() - STALE_CACHE_MS;
  const candidates = (sub: string, test: (name: string) => boolean): string[] => {
    try {
      return fs.readdirSync(sub).filter(test).map((name) => path.join(sub, name));
    } catch {
      return [];
    }
  };
  const stale = [
    ...candidates(dir, (name) => /^run-entry-.*\.v8cache$/.test(name)),
    ...candidates(path.join(dir, COMPILE_CACHE_DIR), () => true),
  ];
  for (const entry of stale) {
    try {
      if (entry !== keep && fs.lstatSync(entry).mtimeMs < before) fs.rmSync(entry, { recursive: true, force: true });
    } catch {
      // gone meanwhile, or not ours to remove
    }
  }
}

/** A short, stable name for a string (FNV-1a, 32 bits, hex); no crypto module on the start-up path. */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/**
 * Memory of long unattended runs (SPEC §12: RSS growth over a 1000-iteration loop ≤ 50 MB).
 * Under a steady allocation rate, which a tool loop against a fast model has, V8 keeps doubling
 * its young generation up to 16 MB per semi-space, and the process keeps the pages. Frozen at the
 * size start-up left it, a 1000-iteration loop grows RSS by 40–55 % less and runs no slower
 * (`bench/run.ts --only growth` on PostgreSQL, median of 4, 2026-12-07, frozen / not: Node 20
 * 23 / 44 MB, Node 22 14 / 32 MB, Node 24 28 / 45 MB; README "Performance"). The flag is read
 * whenever the young generation would grow, so setting it at run time takes effect. Only on the
 * V8 versions it was measured on, 11.3, 12.4 and 13.6 (Node 20, 22, 24): an unknown flag prints
 * an error.
 */
function keepYoungGenerationSmall(): void {
  const major = Number(process.versions.v8.split('.')[0]);
  if (major >= 11 && major <= 13) v8.setFlagsFromString('--semi-space-growth-factor=1');
}
