/**
 * How navi itself runs git (SPEC §16): the loop's status and diff (loop/git-probe.ts), the
 * sandbox's look at the repository (prepare.ts). The working tree is the model's, and a
 * repository can be poisoned before navi starts (a cloned project, an earlier run without the
 * sandbox): whatever its configuration says, navi's git must not run a command. So:
 *
 * - The repository is located once, at the start, and every later call names it
 *   (`GIT_DIR`, `GIT_WORK_TREE`, `GIT_COMMON_DIR`): a `.git` or `commondir` planted later is
 *   never read, and a tree that was no repository stays none.
 * - No system or global configuration of the machine's (`GIT_CONFIG_GLOBAL=/dev/null`, and as
 *   the system file one of navi's that says only `safe.directory = *`), no inherited `GIT_*`
 *   variable (`GIT_EXTERNAL_DIFF`, `GIT_CONFIG_PARAMETERS`, …).
 * - Settings that override every file (`GIT_CONFIG_COUNT`, git's `-c` without the parsing of
 *   `-c`; passed on to git's own children): `core.fsmonitor` off, hooks at `/dev/null`, no
 *   external diff, submodules ignored (their own configs are the model's too).
 * - Filters: a `.gitattributes` in the tree can name any driver, and the configuration defines
 *   it. Before each call navi lists the drivers the configuration defines and blanks their
 *   `clean`, `smudge` and `process` (and `required`): an empty command is no filter. Diffs
 *   also get `--no-ext-diff --no-textconv` (git-probe.ts).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/** Where a repository is, fixed at the start (absolute, real paths). */
export interface GitLocation {
  gitDir: string;
  commonDir: string;
  workTree: string;
  /** The cwd's path inside the work tree (`sub/dir/`, or `` at its top). */
  prefix: string;
}

/** Longest a git query may take; a status of a huge tree is still well under this. */
const GIT_TIMEOUT_MS = 15_000;

/** Output a git query may produce (a status or diff of a very large change). */
const GIT_MAX_BUFFER = 32 * 1024 * 1024;

/** Settings above every configuration file, for every call. */
export const OWN_GIT_CONFIG: ReadonlyArray<readonly [string, string]> = [
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', '/dev/null'],
  // Only a repository named by GIT_DIR may be bare: none is discovered in the cwd.
  ['safe.bareRepository', 'explicit'],
  ['diff.external', ''],
  ['core.alternateRefsCommand', ''],
  ['submodule.recurse', 'false'],
  ['diff.ignoreSubmodules', 'all'],
  ['status.submoduleSummary', 'false'],
  ['gc.auto', '0'],
  ['maintenance.auto', 'false'],
  // Paths relative to cwd, never quoted.
  ['core.quotepath', 'off'],
];

/** The filter drivers a `git config -z --name-only --get-regexp ^filter\.` output names (subsections keep their case and dots). */
export function filterDriverNames(output: string): string[] {
  const names = new Set<string>();
  for (const key of output.split(/[\0\n]/)) {
    const m = /^filter\.(.+)\.[^.]+$/s.exec(key);
    if (m?.[1] !== undefined) names.add(m[1]);
  }
  return [...names];
}

/** Settings that make each named filter driver run nothing. */
export function blankedFilters(drivers: readonly string[]): Array<readonly [string, string]> {
  return drivers.flatMap((d) => [
    [`filter.${d}.clean`, ''],
    [`filter.${d}.smudge`, ''],
    [`filter.${d}.process`, ''],
    [`filter.${d}.required`, 'false'],
  ] as const);
}

/**
 * The "system" configuration of navi's own git: only `safe.directory = *`. git ignores
 * `safe.directory` given any other way than a system or global file, and without it a
 * repository owned by another user (a CI checkout, a container's mount) would be no repository
 * to navi — and then the sandbox would not protect its git directory. Trusting it is safe here:
 * the ownership check keeps a stranger's config from running commands, and navi's git runs none.
 * Written once per process into a private directory; undefined when that fails (no system config then).
 */
let systemConfig: string | null | undefined;
function ownSystemConfig(): string | undefined {
  if (systemConfig === undefined) {
    try {
      const dir = mkdtempSync(join(tmpdir(), 'navi-git-'));
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
      const file = join(dir, 'config');
      writeFileSync(file, '[safe]\n\tdirectory = *\n', { mode: 0o600 });
      systemConfig = file;
    } catch {
      systemConfig = null;
    }
  }
  return systemConfig ?? undefined;
}

/**
 * The environment of navi's own git: `base` without its `GIT_*`, the repository named, the
 * settings above every file, and as system configuration `systemFile` (none when undefined).
 */
export function ownGitEnv(
  base: NodeJS.ProcessEnv,
  location: GitLocation | null,
  extra: ReadonlyArray<readonly [string, string]> = [],
  systemFile?: string,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(base)) if (!name.startsWith('GIT_')) env[name] = value;
  Object.assign(env, systemFile !== undefined ? { GIT_CONFIG_SYSTEM: systemFile } : { GIT_CONFIG_NOSYSTEM: '1' });
  Object.assign(env, {
    LC_ALL: 'C',
    // No optional locks, so a concurrent `git commit` by the agent is not blocked by navi looking.
    GIT_OPTIONAL_LOCKS: '0',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
  });
  if (location !== null) Object.assign(env, { GIT_DIR: location.gitDir, GIT_WORK_TREE: location.workTree, GIT_COMMON_DIR: location.commonDir });
  const config = [...OWN_GIT_CONFIG, ...extra];
  env.GIT_CONFIG_COUNT = String(config.length);
  config.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

function exec(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ ok: boolean; stdout: string }> {
  return new Promise((resolve) => {
    execFile('git', ['--no-pager', ...args], { cwd, env, timeout: GIT_TIMEOUT_MS, maxBuffer: GIT_MAX_BUFFER, windowsHide: true }, (err, stdout) =>
      resolve({ ok: err === null, stdout: String(stdout) }),
    );
  });
}

/**
 * `git args` in `location` from `cwd`, its stdout, or null when git failed (not installed, a
 * corrupt repository, a lock held by the agent's own `git commit`).
 */
export async function runOwnGit(location: GitLocation, cwd: string, args: readonly string[]): Promise<string | null> {
  // Reading configuration runs nothing (includes are files); the drivers it defines are blanked below.
  const system = ownSystemConfig();
  const drivers = await exec(['config', '-z', '--name-only', '--get-regexp', '^filter\\.'], cwd, ownGitEnv(process.env, location, [], system));
  const out = await exec(args, cwd, ownGitEnv(process.env, location, blankedFilters(filterDriverNames(drivers.stdout)), system));
  return out.ok ? out.stdout : null;
}

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** Parses `rev-parse --path-format=absolute --git-dir --git-common-dir --show-toplevel --show-prefix`. */
export function parseLocation(stdout: string): GitLocation | null {
  const [gitDir, commonDir, workTree, prefix = ''] = stdout.split('\n');
  if (gitDir === undefined || commonDir === undefined || workTree === undefined) return null;
  if (![gitDir, commonDir, workTree].every((p) => isAbsolute(p))) return null;
  return { gitDir: real(gitDir), commonDir: real(commonDir), workTree: real(workTree), prefix };
}

/**
 * The repository of the work tree `cwd` is in, found as git finds it but with nothing run; null
 * outside a work tree (a bare repository, inside `.git`, no repository, git missing).
 */
export async function resolveGitLocation(cwd: string): Promise<GitLocation | null> {
  const out = await exec(
    ['rev-parse', '--path-format=absolute', '--git-dir', '--git-common-dir', '--show-toplevel', '--show-prefix'],
    cwd,
    ownGitEnv(process.env, null, [], ownSystemConfig()),
  );
  return out.ok ? parseLocation(out.stdout) : null;
}
