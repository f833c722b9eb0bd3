/**
 * Sets up the sandbox of one navi process: checks the launcher works (probe.ts), makes the
 * private temp directory, finds the git directories the tree's commits write to and what in
 * them stays read-only (git-layout.ts), and the directories hidden inside (hidden-dirs.ts). Where it
 * cannot be set up the answer is exit 2 naming what is missing and the fix, never a run
 * without it.
 */
import { existsSync, lchownSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { InvalidInputError } from '../errors.js';
import { gitControl, writableLayout, type GitFacts } from './git-layout.js';
import { defaultDataRoot, hiddenDirs } from './hidden-dirs.js';
import { naviConfigPaths } from './navi-config-paths.js';
import { DEFAULT_SANDBOX_ENV, type Sandbox, type SandboxPolicy } from './modes.js';
import { isInside } from '../util/inside.js';
import { resolveGitLocation, runOwnGit, type GitLocation } from './own-git.js';
import { BWRAP_PROBE_ARGS, findOnPath, probeLauncher, SEATBELT_PROBE_ARGS } from './probe.js';

export { writableLayout } from './git-layout.js';

/** What prepareSandbox reads from the outside world (tests pass a PATH without bwrap). */
export interface PrepareSandboxOptions {
  cwd: string;
  env: Record<string, string | undefined>;
  platform?: NodeJS.Platform;
  /** navi's configured data directory (`db.data_dir`), hidden inside with the default one. */
  dataDir?: string;
  /** More paths commands must still read where a hidden directory holds them (user tool directories from `tools.paths`; relative to cwd). */
  visible?: readonly string[];
}

/** Where the launcher of each platform comes from, for the message when it is missing. */
const LAUNCHERS: Partial<Record<NodeJS.Platform, { name: string; kind: Sandbox['kind']; fix: string; probe: readonly string[] }>> = {
  linux: {
    name: 'bwrap',
    kind: 'bwrap',
    fix: 'install bubblewrap (apt-get install bubblewrap; dnf install bubblewrap; apk add bubblewrap)',
    probe: BWRAP_PROBE_ARGS,
  },
  darwin: { name: 'sandbox-exec', kind: 'seatbelt', fix: 'sandbox-exec ships with macOS in /usr/bin; put /usr/bin on PATH', probe: SEATBELT_PROBE_ARGS },
};

function unavailable(policy: SandboxPolicy, problem: string): InvalidInputError {
  return new InvalidInputError('sandbox_unavailable', `--sandbox ${policy.mode}: ${problem}; or run without it (--sandbox off)`);
}

/** The repository of `cwd` as git-layout.ts needs it, located as navi's own git locates it; null outside one. */
async function gitFacts(cwd: string): Promise<GitFacts | null> {
  const at = (await resolveGitLocation(cwd)) ?? bareLocation(cwd);
  if (at === null) return null;
  const dotGit = lstatSync(join(at.workTree, '.git'), { throwIfNoEntry: false });
  let worktrees: string[] = [];
  try {
    worktrees = readdirSync(join(at.commonDir, 'worktrees'), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(at.commonDir, 'worktrees', e.name));
  } catch {
    // No linked worktree.
  }
  return {
    gitDir: at.gitDir,
    commonDir: at.commonDir,
    workTree: at.workTree,
    dotGit: dotGit === undefined ? 'other' : dotGit.isDirectory() ? 'dir' : dotGit.isFile() ? 'file' : 'other',
    worktrees,
    modules: moduleGitDirs(join(at.commonDir, 'modules')),
    submoduleDotGits: (await submodulePaths(at)).map((p) => join(at.workTree, p, '.git')).filter((p) => lstatSync(p, { throwIfNoEntry: false })?.isFile() === true),
  };
}

/** The layout with navi's own configuration files kept read-only too (navi-config-paths.ts), under `workspace-write`. */
function withConfigFiles<L extends Pick<Sandbox, 'readOnlyInside'>>(mode: Sandbox['mode'], cwd: string, layout: L): L {
  if (mode !== 'workspace-write') return layout;
  const files = naviConfigPaths(cwd, (p) => lstatSync(p, { throwIfNoEntry: false })?.isFile() === true);
  return { ...layout, readOnlyInside: [...layout.readOnlyInside, ...files] };
}

/** A directory as git tells a git directory: `HEAD`, `objects/` and `refs/` (setup.c's is_git_directory). */
function isGitDirectory(dir: string): boolean {
  return lstatSync(join(dir, 'HEAD'), { throwIfNoEntry: false })?.isFile() === true && existsSync(join(dir, 'objects')) && existsSync(join(dir, 'refs'));
}

/**
 * A bare repository (or a git directory) that `cwd` is, or is inside: it has no work tree, so
 * rev-parse names none and navi's own git does not discover it (`safe.bareRepository=explicit`),
 * but its `config` and `hooks/` steer the git that pushes to it later, outside the sandbox. It is
 * its own git and common directory (a linked worktree's `commondir` is followed), and stands in
 * for the work tree, which has no `.git` of its own.
 */
export function bareLocation(cwd: string): GitLocation | null {
  for (let dir = cwd; ; dir = dirname(dir)) {
    if (isGitDirectory(dir)) {
      let common = dir;
      try {
        const named = readFileSync(join(dir, 'commondir'), 'utf8').trim();
        if (named !== '') common = realOrResolved(resolve(dir, named));
      } catch {
        // No commondir: the directory is its own common one.
      }
      return { gitDir: dir, commonDir: common, workTree: dir, prefix: '' };
    }
    if (dirname(dir) === dir) return null;
  }
}

/** How deep submodules nest under `modules/` before navi stops looking (names with slashes, submodules of submodules). */
const MAX_MODULE_DEPTH = 6;

/** The git directories under a `modules/` directory: those with a `HEAD` and a `config`, and theirs in turn. */
function moduleGitDirs(dir: string, depth = 0): string[] {
  if (depth > MAX_MODULE_DEPTH) return [];
  let entries: string[];
  try {
    entries = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(dir, e.name));
  } catch {
    return [];
  }
  return entries.flatMap((d) =>
    existsSync(join(d, 'HEAD')) && existsSync(join(d, 'config')) ? [d, ...moduleGitDirs(join(d, 'modules'), depth + 1)] : moduleGitDirs(d, depth + 1),
  );
}

/** The tree's submodule paths (gitlinks, mode 160000), as navi's own git reads the index. */
async function submodulePaths(at: GitLocation): Promise<string[]> {
  const out = await runOwnGit(at, at.workTree, ['ls-files', '--stage', '-z']);
  if (out === null) return [];
  return out
    .split('\0')
    .filter((entry) => entry.startsWith('160000 '))
    .map((entry) => entry.slice(entry.indexOf('\t') + 1));
}

/**
 * Makes every missing control path of the repository exist (git-layout.ts says why), so its
 * read-only bind has something to mount on. A directory is made empty, a file gets content
 * with the meaning of its absence; created once and left (never removed: see git-layout.ts).
 * A path that cannot be made (its parent missing) is skipped: bwrap's `--ro-bind-try` skips it too.
 */
function placeControlPaths(facts: GitFacts): void {
  for (const c of gitControl(facts).control) {
    if (existsSync(c.path)) continue;
    try {
      const parent = dirname(c.path);
      if (c.kind === 'dir') mkdirSync(c.path);
      else if (c.placeholder !== undefined) {
        mkdirSync(parent, { recursive: true });
        writeFileSync(c.path, c.placeholder, { flag: 'wx' });
      } else continue;
      // Root running in someone else's checkout (CI): what it made belongs to the repository's owner, who may want to add a hook.
      const owner = statSync(parent);
      if (process.getuid?.() === 0 && owner.uid !== 0) lchownSync(c.path, owner.uid, owner.gid);
    } catch {
      // Someone else made it meanwhile, or the repository is not ours to write: nothing to protect then.
    }
  }
}

function realOrResolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** The hidden directories, real paths, deduplicated; a directory holding the tree stays a hidden one (the tree is bound back over it). */
function hidden(opts: PrepareSandboxOptions): string[] {
  const dataDirs = [defaultDataRoot(opts.env, homedir()), ...(opts.dataDir !== undefined ? [opts.dataDir] : [])];
  return [...new Set(hiddenDirs({ env: opts.env, dataDirs: dataDirs.map((d) => resolve(d)), tmpdir: tmpdir() }).map(realOrResolved))];
}

/** `/etc/resolv.conf` is often a link into `/run` (systemd-resolved): with the network allowed its target stays readable. */
function keepVisible(network: boolean, hiddenDirs: readonly string[]): string[] {
  if (!network) return [];
  const target = realOrResolved('/etc/resolv.conf');
  return target !== '/etc/resolv.conf' && hiddenDirs.some((d) => isInside(d, target)) && statSync(target, { throwIfNoEntry: false })?.isFile() === true ? [target] : [];
}

let tmpRoot: string | undefined;

/** This process's private temp directory, removed when navi exits. */
function privateTmpDir(): string {
  if (tmpRoot === undefined) {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'navi-sandbox-')));
    tmpRoot = dir;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return tmpRoot;
}

/** Where a sandbox would come from here: the launcher, or what is missing and the fix. */
export type LauncherCheck = { kind: Sandbox['kind']; launcher: string } | { problem: string };

/** Finds and probes this platform's launcher (the probe runs once per process). */
export async function checkLauncher(env: Record<string, string | undefined>, platform: NodeJS.Platform = process.platform): Promise<LauncherCheck> {
  const launcher = LAUNCHERS[platform];
  if (launcher === undefined) return { problem: `no sandbox is available on ${platform} (navi uses bubblewrap on Linux, sandbox-exec on macOS)` };
  const path = findOnPath(launcher.name, env.PATH);
  if (path === undefined) return { problem: `${launcher.name} is not on PATH; ${launcher.fix}` };
  const problem = await probeLauncher(path, launcher.probe);
  if (problem !== undefined) {
    const why =
      launcher.kind === 'bwrap'
        ? ' (are user namespaces off? sysctl kernel.unprivileged_userns_clone=1; in Docker, --security-opt seccomp=unconfined or a --privileged container)'
        : '';
    return { problem: `${path} cannot start a sandbox here: ${problem}${why}` };
  }
  return { kind: launcher.kind, launcher: path };
}

/** A ready sandbox for `policy`, null when it is off; `sandbox_unavailable` (exit 2) when it cannot be set up. */
export async function prepareSandbox(policy: SandboxPolicy, opts: PrepareSandboxOptions): Promise<Sandbox | null> {
  if (policy.mode === 'off') return null;
  const found = await checkLauncher(opts.env, opts.platform);
  if ('problem' in found) throw unavailable(policy, found.problem);
  const cwd = realpathSync(opts.cwd);
  const facts = await gitFacts(cwd);
  if (facts !== null && policy.mode === 'workspace-write') placeControlPaths(facts);
  const hiddenHere = hidden(opts);
  return {
    mode: policy.mode,
    network: policy.network,
    kind: found.kind,
    launcher: found.launcher,
    cwd,
    ...withConfigFiles(policy.mode, cwd, writableLayout(policy.mode, cwd, facts)),
    hidden: hiddenHere,
    // The whole work tree stays readable (read-only mode, a cwd below its top) where a hidden directory holds it.
    keepVisible: [
      ...keepVisible(policy.network, hiddenHere),
      ...(facts !== null ? [facts.workTree, facts.gitDir, facts.commonDir] : []),
      cwd,
      ...(opts.visible ?? []).map((p) => realOrResolved(resolve(cwd, p))),
    ],
    tmpDir: privateTmpDir(),
    env: policy.env ?? DEFAULT_SANDBOX_ENV,
  };
}
