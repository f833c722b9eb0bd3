/**
 * What the sandbox stopped, read from a command's output, so the model can adapt (write inside
 * the tree or $TMPDIR, do without the network) instead of retrying. The kernel says "Read-only
 * file system" (EROFS) for a write outside the writable directories, "Device or resource busy"
 * for a rename over a protected git path or of a pinned git directory, "No such file or
 * directory" under a hidden directory, and "Connection refused", "Network is unreachable" or a
 * failed name lookup for a connection from the cut network; every language prints those words,
 * with the path nearby.
 */
import { basename, relative } from 'node:path';
import type { Sandbox } from './modes.js';
import { naviConfigRole } from './navi-config-paths.js';
import { isInside } from '../util/inside.js';

/** One thing the sandbox refused: a `write` (with its path when the output names it), the `network`, or a path in a `hidden` directory. */
export interface SandboxRefusal {
  kind: 'write' | 'network' | 'hidden';
  /** The path the write was refused on, when the output names one. */
  path?: string;
  /** One line for the model and the warning event. */
  message: string;
}

/** What the sandbox needs to explain a refusal. */
export type RefusalContext = Pick<Sandbox, 'mode' | 'cwd' | 'network' | 'readOnlyInside'> & Partial<Pick<Sandbox, 'hidden' | 'pinned' | 'writable' | 'tmpDir'>>;

const EROFS = /read-only file system|\bEROFS\b/i;
/** A rename over (or an unlink of) a mount point — a protected path, a pinned git directory — fails so rather than EROFS. */
const EBUSY = /device or resource busy|\bEBUSY\b/i;
/** A path under a hidden directory (`/tmp/x/y` where only an empty `/tmp` is inside). */
const ENOENT = /no such file or directory|directory nonexistent|\bENOENT\b/i;
const NO_NETWORK =
  /connection refused|\bECONNREFUSED\b|network is unreachable|\bENETUNREACH\b|could not resolve host|temporary failure in name resolution|name or service not known|\bEAI_AGAIN\b|getaddrinfo/i;

/** Reported refusals per command; a script that fails on a thousand files says so once each. */
const MAX_REFUSALS = 5;

/** The path a refusal line names: quoted (', ‘’, "), `cannot create PATH:` (dash), `… file PATH:` (git), else the first absolute path. */
export function refusedPath(line: string): string | undefined {
  // A quoted path: absolute, `./`, `../` or a relative one with a slash (`.git/objects`).
  const quoted = /['‘"]((?:\/|\.{1,2}\/|[\w.-]+\/)[^'’"]*)['’"]/.exec(line);
  if (quoted?.[1] !== undefined) return quoted[1];
  const created = /(?:cannot create|\bfile) (\S+?):/.exec(line);
  if (created?.[1] !== undefined) return created[1];
  return /(?:^|\s)(\/[^\s:,]+)/.exec(line)?.[1];
}

/** `path` as the command named it, absolute (a relative one is taken against the tree, where commands start). */
function absolute(path: string, cwd: string): string {
  return path.startsWith('/') ? path : `${cwd}/${path}`;
}

/** What each protected git path decides, for the message. */
const GIT_PATH_ROLES: Readonly<Record<string, string>> = {
  config: 'its settings run commands (core.fsmonitor, filters)',
  'config.worktree': 'its settings run commands (core.fsmonitor, filters)',
  hooks: 'hooks run on commit, checkout and more',
  info: 'info/attributes can switch on a filter that runs a command',
  commondir: 'it says where git reads the config from',
  gitdir: 'it says where the worktree is',
  '.git': 'it says where the git directory is',
  alternates: 'it says where git reads objects from',
};

/** The protected path `path` is (or is inside, or is git's lock or temp file of), or undefined. */
function protectedPathOf(sandbox: RefusalContext, path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  const abs = absolute(path, sandbox.cwd);
  // The path itself or inside it first: `config.worktree` is not `config`'s lock file.
  return sandbox.readOnlyInside.find((p) => isInside(p, abs)) ?? sandbox.readOnlyInside.find((p) => abs.startsWith(`${p}.`));
}

/** A path shown relative to the tree when inside it. */
function shown(sandbox: RefusalContext, path: string): string {
  return isInside(sandbox.cwd, path) ? relative(sandbox.cwd, path) || '.' : path;
}

function writeMessage(sandbox: RefusalContext, path: string | undefined): string {
  const abs = path === undefined ? undefined : absolute(path, sandbox.cwd);
  if (sandbox.mode === 'read-only') {
    return `the sandbox (read-only) refused a write${path !== undefined ? `: ${path}` : ''}; only $TMPDIR is writable`;
  }
  const protectedPath = protectedPathOf(sandbox, path);
  const configRole = protectedPath === undefined ? undefined : naviConfigRole(protectedPath);
  if (protectedPath !== undefined && configRole !== undefined) {
    return `the sandbox refused a write to navi's own configuration: ${shown(sandbox, protectedPath)} stays read-only (${configRole}); change it outside the sandbox`;
  }
  if (protectedPath !== undefined) {
    const role = GIT_PATH_ROLES[basename(protectedPath)] ?? 'it steers git';
    return `the sandbox refused a write to a protected path of the repository: ${shown(sandbox, protectedPath)} stays read-only (${role}; git outside the sandbox would obey it)`;
  }
  if (abs !== undefined && (sandbox.pinned ?? []).includes(abs)) {
    return `the sandbox refused to move or remove ${shown(sandbox, abs)}: the git directories stay where they are`;
  }
  if (abs !== undefined && [sandbox.cwd, ...(sandbox.writable ?? [])].some((d) => isInside(d, abs))) {
    return `the sandbox refused a write to a protected path of the repository: ${path ?? ''}`;
  }
  return `the sandbox refused a write outside the working tree${path !== undefined ? `: ${path}` : ''}; write inside it or in $TMPDIR`;
}

/** The hidden directory `path` is in, unless a writable directory (bound back over it) holds it. */
function hiddenDirOf(sandbox: RefusalContext, path: string | undefined): string | undefined {
  if (path === undefined || !path.startsWith('/')) return undefined;
  const visible = [sandbox.cwd, ...(sandbox.writable ?? []), ...(sandbox.tmpDir !== undefined ? [sandbox.tmpDir] : [])];
  if (visible.some((d) => isInside(d, path))) return undefined;
  return (sandbox.hidden ?? []).find((d) => isInside(d, path));
}

/** What `output` shows the sandbox refused, in order, each path once; empty when nothing. */
export function sandboxRefusals(output: string, sandbox: RefusalContext): SandboxRefusal[] {
  const refusals: SandboxRefusal[] = [];
  const seen = new Set<string>();
  const push = (kind: SandboxRefusal['kind'], path: string | undefined, message: string): void => {
    const key = `${kind}\0${path ?? ''}`;
    if (seen.has(key)) return;
    seen.add(key);
    refusals.push({ kind, ...(path !== undefined ? { path } : {}), message });
  };
  for (const line of output.split('\n')) {
    if (refusals.length >= MAX_REFUSALS) break;
    const path = refusedPath(line);
    const abs = path === undefined ? undefined : absolute(path, sandbox.cwd);
    const busy = EBUSY.test(line) && (protectedPathOf(sandbox, path) !== undefined || (abs !== undefined && (sandbox.pinned ?? []).includes(abs)));
    if (EROFS.test(line) || busy) {
      push('write', path, writeMessage(sandbox, path));
      continue;
    }
    const hidden = ENOENT.test(line) ? hiddenDirOf(sandbox, path) : undefined;
    if (hidden !== undefined) {
      push(
        'hidden',
        path,
        `the sandbox hides ${hidden} (each command gets an empty one: no socket there leads out): ${path ?? ''} is not there inside; write inside the working tree or in $TMPDIR`,
      );
    } else if (!sandbox.network && NO_NETWORK.test(line) && !seen.has('network\0')) {
      push('network', undefined, 'the sandbox has no network (sandbox.network is false): connections and name lookups fail');
    }
  }
  return refusals;
}
