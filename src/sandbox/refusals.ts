/**
 * What the sandbox stopped, read from a command's output, so the model can adapt (write inside
 * the tree or $TMPDIR, do without the network) instead of retrying. The kernel says "Read-only
 * file system" (EROFS) for a write outside the writable directories and "Connection refused",
 * "Network is unreachable" or a failed name lookup for a connection from the cut network; every
 * language prints those words, with the path nearby.
 */
import type { Sandbox } from './modes.js';
import { isInside } from './prepare.js';

/** One thing the sandbox refused: `write` (with its path when the output names it) or `network`. */
export interface SandboxRefusal {
  kind: 'write' | 'network';
  /** The path the write was refused on, when the output names one. */
  path?: string;
  /** One line for the model and the warning event. */
  message: string;
}

const EROFS = /read-only file system|\bEROFS\b/i;
/** A rename over a read-only bind mount (how git writes its config) fails so rather than EROFS. */
const EBUSY = /device or resource busy|\bEBUSY\b/i;
const NO_NETWORK =
  /connection refused|\bECONNREFUSED\b|network is unreachable|\bENETUNREACH\b|could not resolve host|temporary failure in name resolution|name or service not known|\bEAI_AGAIN\b|getaddrinfo/i;

/** Reported refusals per command; a script that fails on a thousand files says so once each. */
const MAX_REFUSALS = 5;

/** The path a refusal line names: quoted (', ‘’, "), `cannot create PATH:` (dash), `… file PATH:` (git), else the first absolute path. */
export function refusedPath(line: string): string | undefined {
  const quoted = /['‘"]((?:\/|\.{1,2}\/)[^'’"]*)['’"]/.exec(line);
  if (quoted?.[1] !== undefined) return quoted[1];
  const created = /(?:cannot create|\bfile) (\S+?):/.exec(line);
  if (created?.[1] !== undefined) return created[1];
  return /(?:^|\s)(\/[^\s:,]+)/.exec(line)?.[1];
}

/** `path` as the command named it, absolute (a relative one is taken against the tree, where commands start). */
function absolute(path: string, cwd: string): string {
  return path.startsWith('/') ? path : `${cwd}/${path}`;
}

function writeMessage(sandbox: Pick<Sandbox, 'mode' | 'cwd'>, path: string | undefined): string {
  const inTree = path !== undefined && isInside(absolute(path, sandbox.cwd), sandbox.cwd);
  if (sandbox.mode === 'read-only') {
    return `the sandbox (read-only) refused a write${path !== undefined ? `: ${path}` : ''}; only $TMPDIR is writable`;
  }
  if (inTree) return `the sandbox refused a write to a protected path of the repository (git config or hooks): ${path}`;
  return `the sandbox refused a write outside the working tree${path !== undefined ? `: ${path}` : ''}; write inside it or in $TMPDIR`;
}

/** What `output` shows the sandbox refused, in order, each write path once; empty when nothing. */
export function sandboxRefusals(output: string, sandbox: Pick<Sandbox, 'mode' | 'cwd' | 'network' | 'readOnlyInside'>): SandboxRefusal[] {
  const refusals: SandboxRefusal[] = [];
  const seen = new Set<string>();
  const isProtected = (path: string | undefined): boolean =>
    path !== undefined && sandbox.readOnlyInside.some((p) => isInside(absolute(path, sandbox.cwd), p) || absolute(path, sandbox.cwd).startsWith(`${p}.`));
  for (const line of output.split('\n')) {
    if (refusals.length >= MAX_REFUSALS) break;
    if (EROFS.test(line) || (EBUSY.test(line) && isProtected(refusedPath(line)))) {
      const path = refusedPath(line);
      const key = `write\0${path ?? ''}`;
      if (seen.has(key)) continue;
      seen.add(key);
      refusals.push({ kind: 'write', ...(path !== undefined ? { path } : {}), message: writeMessage(sandbox, path) });
    } else if (!sandbox.network && NO_NETWORK.test(line) && !seen.has('network')) {
      seen.add('network');
      refusals.push({ kind: 'network', message: 'the sandbox has no network (sandbox.network is false): connections and name lookups fail' });
    }
  }
  return refusals;
}
