/**
 * The macOS `sandbox-exec` profile of a sandbox (Seatbelt, what Claude Code and codex use there).
 * Written to the same rules as the bubblewrap mounts (bwrap-args.ts): read everything, write
 * the writable directories and the private temp directory (plus the devices a shell writes to),
 * the git config and hooks denied again, network denied unless allowed. Not run by navi's tests:
 * they run on Linux (README says so).
 */
import type { Sandbox } from './modes.js';

/** A Seatbelt string literal: paths may hold quotes or backslashes. */
function quoted(path: string): string {
  return `"${path.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The profile text for `sandbox-exec -p`. Paths must be real (macOS /tmp is /private/tmp): prepare.ts resolves them. */
export function seatbeltProfile(sandbox: Pick<Sandbox, 'network' | 'writable' | 'readOnlyInside' | 'tmpDir'>): string {
  const writable = [sandbox.tmpDir, ...sandbox.writable].map((dir) => `(subpath ${quoted(dir)})`);
  const lines = [
    '(version 1)',
    '(allow default)',
    '(deny file-write*)',
    `(allow file-write* ${writable.join(' ')} (literal "/dev/null") (literal "/dev/tty") (regex #"^/dev/fd/"))`,
  ];
  if (sandbox.readOnlyInside.length > 0) {
    lines.push(`(deny file-write* ${sandbox.readOnlyInside.map((p) => `(subpath ${quoted(p)})`).join(' ')})`);
  }
  // Unix sockets stay allowed (local tools talk over them); IP goes nowhere.
  if (!sandbox.network) lines.push('(deny network*)', '(allow network* (remote unix-socket))');
  return `${lines.join('\n')}\n`;
}

/** `sandbox-exec` arguments that run `/bin/sh -c command` inside `sandbox` (cwd is set by the spawn). */
export function seatbeltArgs(sandbox: Sandbox, command: string): string[] {
  return ['-p', seatbeltProfile(sandbox), '/bin/sh', '-c', command];
}
