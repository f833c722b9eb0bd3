/**
 * The packed bin as a user gets it (issue 20): `npm pack`, unpacked into a temporary prefix and
 * made read-only, runs `navi run` and `--version`; the V8 code cache of the run path
 * (src/cli/main.cts) is written under the user's cache directory — never into the package — and
 * one that is for another build or has corrupted bytes is ignored and replaced. On Node ≥ 22.1 the
 * other commands use Node's own compile cache beside it (issue 40), which is checked the same way.
 *
 * The dependencies are the repository's own node_modules, linked in (an install without the
 * registry). The process runs as root here, which may write to a read-only directory anyway: the
 * test also compares the package's files before and after.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import Module from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';
import { fakeOllamaForFile } from '../support/fake-ollama-harness.js';

/** Hang guard: far above a run of a few hundred milliseconds on a loaded machine. */
const RUN_TIMEOUT_MS = 60_000;
const TEST_TIMEOUT_MS = 240_000;
const ANSWER = 'All done here.';

/** Node ≥ 22.1 (`module.enableCompileCache`): navi keeps Node's compile cache for the ES module build. */
const NODE_COMPILE_CACHE = typeof (Module as { enableCompileCache?: unknown }).enableCompileCache === 'function';

let tmp = '';
let pkgDir = '';
let bin = '';
const fake = fakeOllamaForFile({ turns: [] });
let before = '';

/** Every file below `dir` with its size and modification time (symlinks not followed). */
function listing(dir: string): string {
  const rows: string[] = [];
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const st = fs.lstatSync(p);
      rows.push(`${path.relative(dir, p)} ${st.size} ${st.mtimeMs}`);
      if (e.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return rows.sort().join('\n');
}

function run(args: string[], cacheHome: string | undefined, cwd = path.join(tmp, 'work')): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: path.join(tmp, 'home'),
    CI: '1',
    NO_COLOR: '1',
    OLLAMA_HOST: fake.url,
    NAVI_DATA_DIR: path.join(tmp, 'data'),
  };
  if (cacheHome !== undefined) env.XDG_CACHE_HOME = cacheHome;
  // stdin is /dev/null, as runNavi gives it: a pipe nobody closes would make every run wait out
  // the stdin grace (5 s) before it starts.
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd, env, timeout: RUN_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The cache files for the run path in `dir`. */
function cacheFiles(dir: string): string[] {
  const navi = path.join(dir, 'navi');
  return fs.existsSync(navi) ? fs.readdirSync(navi).filter((f) => /^run-entry-.*\.v8cache$/.test(f)).map((f) => path.join(navi, f)) : [];
}

/** Where Node's compile cache lives under a cache home (a directory per Node version, V8 flags and user inside). */
function compileCacheDir(cacheHome: string): string {
  return path.join(cacheHome, 'navi', 'compile-cache');
}

/** The largest file of Node's compile cache under `cacheHome`. */
function largestCompileCacheFile(cacheHome: string): string {
  const files = fs
    .readdirSync(compileCacheDir(cacheHome), { recursive: true, encoding: 'utf8' })
    .map((f) => path.join(compileCacheDir(cacheHome), f))
    .filter((f) => fs.statSync(f).isFile());
  const [largest] = files.sort((a, b) => fs.statSync(b).size - fs.statSync(a).size);
  if (largest === undefined) throw new Error('no compile cache file');
  return largest;
}

/** A cache file as main.cts writes it: SHA-1 of the payload, then the payload. */
function isWellFormed(file: string): boolean {
  const bytes = fs.readFileSync(file);
  return bytes.length > 20 && createHash('sha1').update(bytes.subarray(20)).digest().equals(bytes.subarray(0, 20));
}

async function oneShot(cacheHome: string | undefined): Promise<void> {
  fake.setScript({ turns: [{ content: ANSWER }] });
  const r = await run(['run', '--quiet', 'Say you are done.'], cacheHome);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout.trim()).toBe(ANSWER);
}

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'navi-pkg-install-'));
  for (const d of ['home', 'work', 'prefix/lib/node_modules']) fs.mkdirSync(path.join(tmp, d), { recursive: true });
  // --ignore-scripts: dist/ is already built (npm test builds first); prepare would rebuild it under running tests.
  const out = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp], { cwd: REPO_ROOT, encoding: 'utf8' });
  const [packed] = JSON.parse(out) as Array<{ filename: string }>;
  if (!packed) throw new Error('npm pack wrote nothing');
  execFileSync('tar', ['-xzf', path.join(tmp, packed.filename), '-C', path.join(tmp, 'prefix/lib/node_modules')]);
  pkgDir = path.join(tmp, 'prefix/lib/node_modules/navi');
  fs.renameSync(path.join(tmp, 'prefix/lib/node_modules/package'), pkgDir);
  fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(pkgDir, 'node_modules'));
  bin = path.join(pkgDir, 'dist/cli/main.cjs');
  execFileSync('chmod', ['-R', 'a-w', pkgDir]);
  before = listing(pkgDir);
}, TEST_TIMEOUT_MS);

afterAll(() => {
  if (pkgDir) execFileSync('chmod', ['-R', 'u+w', pkgDir]);
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('the installed package, read-only', () => {
  it('answers --version', async () => {
    const r = await run(['--version'], path.join(tmp, 'cache-version'));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  }, TEST_TIMEOUT_MS);

  it('runs a one-shot, writes its code cache under XDG_CACHE_HOME once, and reuses it', async () => {
    const cacheHome = path.join(tmp, 'cache-xdg');
    await oneShot(cacheHome);
    const [file, ...more] = cacheFiles(cacheHome);
    expect(more).toEqual([]);
    expect(file).toBeDefined();
    if (file === undefined) return;
    expect(isWellFormed(file)).toBe(true);
    const made = fs.statSync(file);
    await oneShot(cacheHome);
    // Accepted by V8: not written again.
    const after = fs.statSync(file);
    expect([after.ino, after.mtimeMs]).toEqual([made.ino, made.mtimeMs]);
    // The run path keeps to its own cache, on every Node version.
    expect(fs.existsSync(compileCacheDir(cacheHome))).toBe(false);
    expect(listing(pkgDir)).toBe(before);
  }, TEST_TIMEOUT_MS);

  it('imports at run time with its code cache too: a user tool loads on the first run and on the cached ones', async () => {
    // Node 20 loses import() in a script compiled from cached data (src/dynamic-import.ts).
    const cacheHome = path.join(tmp, 'cache-import');
    const work = path.join(tmp, 'work-tools');
    fs.mkdirSync(path.join(work, 'tools'), { recursive: true });
    fs.writeFileSync(
      path.join(work, 'tools', 'shout.mjs'),
      [
        "export const name = 'shout';",
        "export const description = 'Upper-cases a text';",
        "export const parameters = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };",
        'export function execute(args) { return args.text.toUpperCase() + "!"; }',
        '',
      ].join('\n'),
    );
    for (let i = 0; i < 3; i++) {
      fake.setScript({ turns: [{ tool_calls: [{ name: 'shout', arguments: { text: `call ${i}` } }] }, { content: ANSWER }] });
      const r = await run(['run', '--quiet', 'Shout it.'], cacheHome, work);
      expect(r.stderr, `run ${i}`).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe(ANSWER);
      expect(cacheFiles(cacheHome)).toHaveLength(1);
      const last = fake.requests.filter((q) => q.path === '/api/chat').at(-1);
      expect(JSON.stringify(last?.body?.messages)).toContain(`CALL ${i}!`);
    }
  }, TEST_TIMEOUT_MS);

  it('without XDG_CACHE_HOME, keeps the cache in ~/.cache/navi', async () => {
    await oneShot(undefined);
    expect(cacheFiles(path.join(tmp, 'home', '.cache'))).toHaveLength(1);
    expect(listing(pkgDir)).toBe(before);
  }, TEST_TIMEOUT_MS);

  it("another command keeps Node's compile cache (Node ≥ 22.1) under XDG_CACHE_HOME, reuses it, and replaces a corrupted file", async () => {
    const cacheHome = path.join(tmp, 'cache-node');
    const dir = compileCacheDir(cacheHome);
    const help = async (): Promise<void> => {
      const r = await run(['--help'], cacheHome);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('navi run');
    };
    // Accepted by V8 when a run writes nothing. Not always the first run after one that wrote:
    // a module first compiled after 500 ms (main.cts changes a V8 flag then; a slow run on a
    // loaded machine) is compiled again once by a quicker run. A few runs, not one.
    const reusedWithin = async (runs: number): Promise<boolean> => {
      for (let i = 0; i < runs; i++) {
        const was = listing(dir);
        await help();
        if (listing(dir) === was) return true;
      }
      return false;
    };
    await help();
    if (!NODE_COMPILE_CACHE) {
      expect(fs.existsSync(dir)).toBe(false);
      return;
    }
    expect(await reusedWithin(3)).toBe(true);
    // Flipped bytes: Node's checksum catches them; the file is compiled again and replaced.
    const file = largestCompileCacheFile(cacheHome);
    const bytes = fs.readFileSync(file);
    for (let i = bytes.length >> 1; i < (bytes.length >> 1) + 4096 && i < bytes.length; i++) bytes[i] = (bytes[i] ?? 0) ^ 0x5a;
    fs.writeFileSync(file, bytes);
    const corrupted = fs.statSync(file).ino;
    await help();
    expect(fs.statSync(file).ino).not.toBe(corrupted); // a new file, renamed over the old one
    expect(await reusedWithin(3)).toBe(true);
    expect(listing(pkgDir)).toBe(before);
  }, TEST_TIMEOUT_MS);

  it('ignores a cache with corrupted bytes or for another build, and replaces its own', async () => {
    const cacheHome = path.join(tmp, 'cache-stale');
    await oneShot(cacheHome);
    const [file] = cacheFiles(cacheHome);
    if (file === undefined) throw new Error('no cache written');
    // Another build's cache (its hash in the name) is never read nor touched.
    const other = path.join(path.dirname(file), path.basename(file).replace(/^run-entry-[0-9a-f]+-/, 'run-entry-0000000000000000-'));
    fs.copyFileSync(file, other);
    const otherBefore = fs.statSync(other);
    // Flip bytes inside the payload, keeping the digest: V8 itself would not notice, and crash.
    const bytes = fs.readFileSync(file);
    for (let i = bytes.length >> 1; i < (bytes.length >> 1) + 4096 && i < bytes.length; i++) bytes[i] = (bytes[i] ?? 0) ^ 0x5a;
    fs.writeFileSync(file, bytes);
    await oneShot(cacheHome);
    expect(isWellFormed(file)).toBe(true);
    // Garbage of any length: ignored and replaced as well.
    fs.writeFileSync(file, 'not a code cache');
    await oneShot(cacheHome);
    expect(isWellFormed(file)).toBe(true);
    expect(fs.statSync(other).mtimeMs).toBe(otherBefore.mtimeMs);
    // Caches not written for 30 days (a build, a Node version no longer used) go when one is written.
    const longAgo = new Date(Date.now() - 40 * 24 * 3600 * 1000);
    const oldBuild = path.join(path.dirname(file), 'run-entry-1111111111111111-v0.0.0-x64-00000000.v8cache');
    const oldNode = path.join(compileCacheDir(cacheHome), 'v0.0.0-x64-00000000-0');
    fs.writeFileSync(oldBuild, 'an old build');
    fs.mkdirSync(path.join(oldNode, 'sub'), { recursive: true });
    fs.writeFileSync(path.join(oldNode, 'sub', 'entry'), 'an old Node');
    for (const p of [oldBuild, oldNode]) fs.utimesSync(p, longAgo, longAgo);
    fs.writeFileSync(file, 'not a code cache');
    await oneShot(cacheHome);
    expect(isWellFormed(file)).toBe(true);
    expect([fs.existsSync(oldBuild), fs.existsSync(oldNode), fs.existsSync(other)]).toEqual([false, false, true]);
    expect(listing(pkgDir)).toBe(before);
  }, TEST_TIMEOUT_MS);
});
