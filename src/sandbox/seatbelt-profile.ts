/**
 * The macOS `sandbox-exec` profile of a sandbox (Seatbelt, what Claude Code and codex use there).
 * Written to the same rules as the bubblewrap mounts (bwrap-args.ts) as far as Seatbelt goes:
 * read everything, write the writable directories and the private temp directory (plus the
 * devices a shell writes to); the protected git paths denied again, by path, so one that does
 * not exist yet cannot be created either, and the git directories themselves cannot be renamed
 * or removed; no Unix socket outside the tree and the private temp directory (Seatbelt checks a
 * socket connection by its path, so where bwrap hides `/tmp` and `/run` this refuses the
 * connection instead, and those directories stay readable); network denied unless allowed.
 * Not run by navi's tests: they run on Linux (README says so).
 */
import type { Sandbox } from './modes.js';

/** A Seatbelt string literal: paths may hold quotes or backslashes. */
function quoted(path: string): string {
  return `"${path.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** macOS resolves names through this socket (mDNSResponder): allowed when the network is. */
const RESOLVER_SOCKET = '/private/var/run/mDNSResponder';

/** The profile text for `sandbox-exec -p`. Paths must be real (macOS /tmp is /private/tmp): prepare.ts resolves them. */
export function seatbeltProfile(sandbox: Pick<Sandbox, 'network' | 'writable' | 'readOnlyInside' | 'tmpDir' | 'pinned'>): string {
  const own = [sandbox.tmpDir, ...sandbox.writable];
  const writable = own.map((dir) => `(subpath ${quoted(dir)})`);
  const lines = [
    '(version 1)',
    '(allow default)',
    '(deny file-write*)',
    `(allow file-write* ${writable.join(' ')} (literal "/dev/null") (literal "/dev/tty") (regex #"^/dev/fd/"))`,
  ];
  if (sandbox.readOnlyInside.length > 0) {
    // literal: the file itself (made or not); subpath: a directory's contents.
    lines.push(`(deny file-write* ${sandbox.readOnlyInside.map((p) => `(literal ${quoted(p)}) (subpath ${quoted(p)})`).join(' ')})`);
  }
  // The directory entry itself: a rename or removal of a git directory, not the files in it.
  if (sandbox.pinned.length > 0) lines.push(`(deny file-write* ${sandbox.pinned.map((p) => `(literal ${quoted(p)})`).join(' ')})`);
  // No Unix socket leads out (tmux, PostgreSQL, ssh-agent, navi's own data directory); the command's own ones work.
  const sockets = [...own.map((dir) => `(remote unix-socket (subpath ${quoted(dir)}))`), ...(sandbox.network ? [`(remote unix-socket (path-literal ${quoted(RESOLVER_SOCKET)}))`] : [])];
  lines.push('(deny network-outbound (remote unix-socket))', `(allow network-outbound ${sockets.join(' ')})`);
  if (!sandbox.network) {
    lines.push('(deny network*)', `(allow network-outbound ${sockets.join(' ')})`, '(allow network-bind network-inbound (local unix-socket))');
  }
  return `${lines.join('\n')}\n`;
}

/** `sandbox-exec` arguments that run `/bin/sh -c command` inside `sandbox` (cwd is set by the spawn). */
export function seatbeltArgs(sandbox: Sandbox, command: string): string[] {
  return ['-p', seatbeltProfile(sandbox), '/bin/sh', '-c', command];
}
