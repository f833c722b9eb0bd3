// @ts-check
/**
 * npm's `prepare` hook: builds `dist/` so that installing navi from git (`npm i -g git+…`) gives a
 * working `navi` bin; in a clone it runs after `npm ci` / `npm install` (a second build is cheap).
 *
 * npm is meant to install a git dependency's dependencies and devDependencies before `prepare`,
 * but a GLOBAL install from git runs it with none of them (npm/cli#8440, open): the nested
 * `npm install` inherits `--global` and installs the clone itself instead of its dependencies.
 * So when the build tools are missing, this installs them first (`npm ci` from the lockfile, in a
 * temporary directory linked as node_modules, without the outer install's settings and with
 * `--ignore-scripts`), then builds.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(path.join(ROOT, 'package.json'));

/** @param {string} name */
function resolvable(name) {
  try {
    require.resolve(name);
    return true;
  } catch {
    return false;
  }
}

/**
 * The environment for a nested npm: only where packages come from is kept — --global, --prefix,
 * --force and the rest of the outer install's settings would make it another global install
 * of navi itself.
 */
function cleanNpmEnv() {
  /** @type {NodeJS.ProcessEnv} */
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^npm_config_/i.test(key) || /^npm_config_(cache|registry|userconfig|strict_ssl|cafile|proxy|https_proxy|noproxy)$/i.test(key)) env[key] = value;
  }
  return env;
}

/** @param {string} command @param {string[]} args @param {NodeJS.ProcessEnv} env @param {string} [cwd] */
function run(command, args, env, cwd = ROOT) {
  const result = spawnSync(command, args, { cwd, env, stdio: 'inherit' });
  if (result.status !== 0) {
    process.exitCode = result.status ?? 1;
    throw new Error(`navi prepare: ${path.basename(command)} ${args.join(' ')} failed (${result.error?.message ?? `exit ${String(result.status)}`})`);
  }
}

if (!resolvable('esbuild') || !resolvable('yargs')) {
  const npm = process.env.npm_execpath;
  if (!npm) {
    process.stderr.write('navi prepare: esbuild is not installed and npm did not say where it is; run `npm install` first\n');
    process.exit(1);
  }
  const env = cleanNpmEnv();
  // In a directory of its own (the clone is npm's working area meanwhile), from the lockfile.
  const tools = fs.mkdtempSync(path.join(os.tmpdir(), 'navi-prepare-'));
  for (const file of ['package.json', 'package-lock.json']) fs.copyFileSync(path.join(ROOT, file), path.join(tools, file));
  process.stderr.write('navi prepare: installing the build dependencies (npm/cli#8440: a global git install provides none)\n');
  const result = spawnSync(process.execPath, [npm, 'ci', '--include=dev', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: tools, env, stdio: 'inherit' });
  if (result.status !== 0) {
    process.exitCode = result.status ?? 1;
    throw new Error(`navi prepare: npm ci of the build dependencies failed (${result.error?.message ?? `exit ${String(result.status)}`})`);
  }
  fs.rmSync(path.join(ROOT, 'node_modules'), { recursive: true, force: true });
  fs.symlinkSync(path.join(tools, 'node_modules'), path.join(ROOT, 'node_modules'), 'dir');
  try {
    run(process.execPath, [path.join(ROOT, 'scripts', 'build.js')], process.env);
  } finally {
    // The bundle needs none of it; the installed package gets its own dependencies from npm.
    fs.rmSync(path.join(ROOT, 'node_modules'), { force: true });
    fs.rmSync(tools, { recursive: true, force: true });
  }
} else {
  run(process.execPath, [path.join(ROOT, 'scripts', 'build.js')], process.env);
}

/**
 * npm/cli#8440 (and #3692) once more: that nested global `npm install` also links the global
 * package to this clone (`<prefix>/lib/node_modules/navi -> …/_cacache/tmp/git-clone…`), which
 * npm deletes when the install ends: the outer install writes the package through the link and
 * leaves `navi` dangling. A real directory in the link's place (a copy of the built clone, which
 * the outer install then overwrites with the packed files) outlives the clone.
 */
const globalPrefix = process.env.npm_config_global === 'true' ? (process.env.npm_config_global_prefix ?? process.env.npm_config_prefix) : undefined;
if (globalPrefix) {
  const link = process.platform === 'win32' ? path.join(globalPrefix, 'node_modules', 'navi') : path.join(globalPrefix, 'lib', 'node_modules', 'navi');
  /** @type {boolean} */
  let ours;
  try {
    ours = fs.lstatSync(link).isSymbolicLink() && fs.realpathSync(link) === fs.realpathSync(ROOT);
  } catch {
    ours = false;
  }
  if (ours) {
    const copy = `${link}.navi-prepare`;
    fs.rmSync(copy, { recursive: true, force: true });
    fs.cpSync(ROOT, copy, { recursive: true, filter: (src) => !/[\\/](node_modules|\.git)$/.test(src) });
    // npm's cache directory is private; an installed package is not.
    fs.chmodSync(copy, 0o755);
    // The outer install puts the dependencies through the link too, into the clone it deletes:
    // the copy gets its own, from the lockfile (already in npm's cache from the step above).
    run(process.execPath, [process.env.npm_execpath ?? 'npm', 'ci', '--omit=dev', '--no-audit', '--no-fund', '--ignore-scripts'], cleanNpmEnv(), copy);
    fs.unlinkSync(link);
    fs.renameSync(copy, link);
  }
}
