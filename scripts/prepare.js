// @ts-check
/**
 * npm's `prepare` hook: builds `dist/` so that installing navi from git (`npm i -g git+…`) gives a
 * working `navi` bin; in a clone it runs after `npm ci` / `npm install` (a second build is cheap).
 *
 * npm is meant to install a git dependency's dependencies and devDependencies before `prepare`,
 * but a GLOBAL install from git runs it with none of them (npm/cli#8440, open): the nested
 * `npm install` inherits `--global` and installs the clone itself instead of its dependencies.
 * So when the build tools are missing, this installs them here first, locally (the global and
 * settings of the outer install removed; `--ignore-scripts` so this hook does not run again).
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
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

/** @param {string} command @param {string[]} args @param {NodeJS.ProcessEnv} env */
function run(command, args, env) {
  const result = spawnSync(command, args, { cwd: ROOT, env, stdio: 'inherit' });
  if (result.status !== 0) {
    process.stderr.write(`navi prepare: ${path.basename(command)} ${args.join(' ')} failed (${result.error?.message ?? `exit ${String(result.status)}`})\n`);
    process.exit(result.status ?? 1);
  }
}

if (!resolvable('esbuild') || !resolvable('yargs')) {
  const npm = process.env.npm_execpath;
  if (!npm) {
    process.stderr.write('navi prepare: esbuild is not installed and npm did not say where it is; run `npm install` first\n');
    process.exit(1);
  }
  /** @type {NodeJS.ProcessEnv} */
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    // Only where packages come from is kept: --global, --prefix, --force and the rest of the
    // outer install's settings would make this another global install of navi itself.
    if (!/^npm_config_/i.test(key) || /^npm_config_(cache|registry|userconfig|globalconfig|strict_ssl|cafile|proxy|https_proxy|noproxy)$/i.test(key)) env[key] = value;
  }
  process.stderr.write('navi prepare: installing the build dependencies (npm/cli#8440: a global git install provides none)\n');
  run(process.execPath, [npm, 'install', '--include=dev', '--no-save', '--no-audit', '--no-fund', '--ignore-scripts', '--global=false'], env);
}
run(process.execPath, [path.join(ROOT, 'scripts', 'build.js')], process.env);
