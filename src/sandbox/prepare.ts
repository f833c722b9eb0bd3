/**
 * Sets up the sandbox of one navi process: checks the launcher works (probe.ts), makes the
 * private temp directory, and finds the git directories the tree's commits write to. Where it
 * cannot be set up the answer is exit 2 naming what is missing and the fix, never a run
 * without it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative } from 'node:path';
import { InvalidInputError } from '../errors.js';
import type { Sandbox, SandboxPolicy } from './modes.js';
import { BWRAP_PROBE_ARGS, findOnPath, probeLauncher, SEATBELT_PROBE_ARGS } from './probe.js';

/** What prepareSandbox reads from the outside world (tests pass a PATH without bwrap). */
export interface PrepareSandboxOptions {
  cwd: string;
  env: Record<string, string | undefined>;
  platform?: NodeJS.Platform;
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

/** `path` is `dir` or inside it. */
export function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** The git directory and the common one (they differ in a linked worktree), absolute; none outside a repository. */
function gitDirs(cwd: string): Promise<string[]> {
  return new Promise((resolve) => {
    execFile('git', ['rev-parse', '--path-format=absolute', '--git-dir', '--git-common-dir'], { cwd, timeout: 10_000 }, (error, stdout) => {
      if (error !== null) return resolve([]);
      resolve([...new Set(String(stdout).split('\n').filter((l) => isAbsolute(l)))]);
    });
  });
}

/**
 * The writable directories and the read-only paths inside them. The tree is writable, and so
 * are its git directories where they lie outside it (a subdirectory of a repository, a linked
 * worktree): commits must work. A git directory's `config` and `hooks` stay read-only: what a
 * command wrote there (a hook, `core.fsmonitor`) would run outside the sandbox the next time
 * navi or the user calls git.
 */
export function writableLayout(mode: Sandbox['mode'], cwd: string, git: readonly string[]): Pick<Sandbox, 'writable' | 'readOnlyInside'> {
  if (mode === 'read-only') return { writable: [], readOnlyInside: [] };
  const outside = git.filter((dir) => !isInside(dir, cwd));
  return { writable: [cwd, ...outside], readOnlyInside: git.flatMap((dir) => [join(dir, 'config'), join(dir, 'hooks')]) };
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
  return {
    mode: policy.mode,
    network: policy.network,
    kind: found.kind,
    launcher: found.launcher,
    cwd,
    ...writableLayout(policy.mode, cwd, await gitDirs(cwd)),
    tmpDir: privateTmpDir(),
  };
}
