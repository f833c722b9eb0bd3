#!/usr/bin/env node
/**
 * Entry point. CommonJS on purpose: `--version` is answered here before anything else is
 * loaded, because scripts call it in loops and it must cost little more than starting node
 * itself (SPEC §12) — and Node 20 loads a CommonJS file measurably faster than an ES module.
 *
 * Everything else starts in `run-entry.cjs` (src/cli/run-entry.ts: the `navi run` path as one
 * minified, ASCII-only CommonJS bundle, scripts/build.js), compiled with a V8 code cache, and the
 * other commands continue into the split ES module build (`app.js`). Node 20 has no compile
 * cache of its own (`module.enableCompileCache` came in 22.1), so this file keeps one: the
 * bytecode V8 made for run-entry.cjs in an earlier run, which spares parsing and compiling it
 * (~60–80 ms of a one-shot run; README "Performance"). It lives in the user's cache directory
 * (the package directory may be read-only), named by the build, Node's version and the V8 flags:
 * V8 rejects a cache made under other flags, and a rejected or unreadable one is replaced.
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

/** The first 16 hex digits of run-entry.cjs's SHA-256, set by scripts/build.js. */
declare const NAVI_RUN_ENTRY_HASH: string;
/** The top-level command words (`COMMANDS`, src/cli/shorthand.ts), set by scripts/build.js. */
declare const NAVI_COMMANDS: readonly string[];

/** When the young generation stops growing: after start-up, early in a long run. */
const YOUNG_GENERATION_FREEZE_MS = 500;

/** The digest in front of a code cache file's payload (`checkedPayload`): SHA-1, 20 bytes. */
const DIGEST_BYTES = 20;

/** Where the PGlite worker started here waits to be adopted (src/store/pglite-worker.ts reads it). */
const EARLY_PGLITE_KEY = '__naviEarlyPglite';

/** Where the run entry finds this file's `import()` (src/dynamic-import.ts reads it). */
const IMPORT_KEY = '__naviImport';

interface FullCli {
  main(args: string[]): Promise<void>;
}

interface RunEntry {
  main(args: string[], loadFullCli: () => Promise<FullCli>): Promise<void>;
}

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
  process.stdout.write(`${pkg.version}\n`);
} else {
  // The CLI is a bundle (scripts/build.js): with NAVI_DEBUG, stack traces name src/ files and lines.
  if (process.env.NAVI_DEBUG) process.setSourceMapsEnabled(true);
  // The PGlite worker sets these flags for its WebAssembly, and flags are per process: set before
  // anything is compiled, every run has the same flags, so the code cache below stays valid.
  (require('../store/wasm-baseline.cjs') as typeof WasmBaseline).useBaselineWasmCompiler();
  // Compiled from the code cache, the run entry's own import() fails on Node 20 ("A dynamic
  // import callback was not specified"): it imports user tools, node:https… through this file's.
  (globalThis as Record<string, unknown>)[IMPORT_KEY] = (specifier: string): Promise<unknown> => import(specifier);
  startPgliteEarly(args);
  const cache = codeCacheFile();
  // Start-up (module loading, opening PGlite) allocates fast and is quicker with room to do so.
  setTimeout(() => {
    // The cache is written before the flag changes: V8 checks the flags a cache was made under.
    cache.save();
    keepYoungGenerationSmall();
  }, YOUNG_GENERATION_FREEZE_MS).unref();
  const fullCli = (): Promise<FullCli> => {
    // Another command: the cache is made by a run, so that it holds the run path's functions.
    cache.save = () => undefined;
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
    fullCli().then((cli) => cli.main(args), cannotLoad);
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

/** The cache file for this build, Node and V8 flags: `$XDG_CACHE_HOME/navi` or `~/.cache/navi`. */
function codeCacheFile(): CodeCache {
  const cache: CodeCache = { file: null, data: undefined, save: () => undefined };
  const xdg = process.env.XDG_CACHE_HOME;
  let base: string;
  try {
    base = xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.cache');
  } catch {
    return cache; // no home directory: run without a cache
  }
  const flags = fnv1a(`${process.execArgv.join('\0')}\0${process.env.NODE_OPTIONS ?? ''}`);
  cache.file = path.join(base, 'navi', `run-entry-${NAVI_RUN_ENTRY_HASH}-${process.version}-${process.arch}-${flags}.v8cache`);
  try {
    cache.data = checkedPayload(fs.readFileSync(cache.file));
  } catch {
    // none yet
  }
  return cache;
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
 * size start-up left it, a 1000-iteration loop grows RSS by about a third less and runs no
 * slower (`npm run bench -- --only growth,gap`; README "Performance"). The flag is read whenever
 * the young generation would grow, so setting it at run time takes effect. Only on the V8
 * versions known to have it (an unknown flag prints an error).
 */
function keepYoungGenerationSmall(): void {
  const major = Number(process.versions.v8.split('.')[0]);
  if (major >= 11 && major <= 13) v8.setFlagsFromString('--semi-space-growth-factor=1');
}
