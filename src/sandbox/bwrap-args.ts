/**
 * The bubblewrap command line of one sandboxed command (Linux). Pure, so each rule has a test.
 *
 * - `--ro-bind / /` first: everything reads as on the host and nothing writes. Then, parents
 *   before children (a mount hides what was mounted below it before): an empty tmpfs over each
 *   hidden directory (hidden-dirs.ts: `/tmp`, `/run`, …, where sockets that lead out live), the
 *   writable directories, the pinned ones (bound onto themselves so they cannot be renamed), and
 *   the paths inside them that must stay read-only (git-layout.ts). So a tree under `/tmp` is
 *   still there and writable, and a data directory inside the tree is still hidden.
 * - `--dev /dev`, `--proc /proc`: a minimal /dev (null, zero, urandom, tty, shm) and a procfs
 *   of the new PID namespace.
 * - `--unshare-pid`: a command sees and signals only its own processes, not navi or the rest
 *   of the machine. `--die-with-parent`: when bwrap dies (navi's SIGKILL of the group) so does
 *   everything inside.
 * - `--unshare-net` unless the network is allowed: only a loopback of its own, so a connection
 *   to any port (the host's 127.0.0.1 included) is refused and no name resolves.
 * - No `--new-session`: the shell is spawned detached, i.e. already in a session of its own
 *   without a controlling terminal (so TIOCSTI cannot reach navi's terminal), and another
 *   session inside would take the command out of the process group navi kills on timeout.
 */
import type { Sandbox } from './modes.js';
import { depth } from './paths.js';

/** `bwrap` arguments that run `/bin/sh -c command` inside `sandbox`; `isDir` says which hidden directories exist (a tmpfs needs one to mount on). */
export function bwrapArgs(sandbox: Sandbox, command: string, isDir: (path: string) => boolean = () => true): string[] {
  return [...bwrapMounts(sandbox, isDir), '--chdir', sandbox.cwd, '--', '/bin/sh', '-c', command];
}

/** What bwrapMounts needs of a sandbox. */
export type MountLayout = Pick<Sandbox, 'network' | 'writable' | 'readOnlyInside' | 'tmpDir' | 'pinned' | 'hidden' | 'keepVisible'>;

/** The namespace and mount part, shared by every command and the start-up probe. */
export function bwrapMounts(sandbox: MountLayout, isDir: (path: string) => boolean = () => true): string[] {
  const ops: Array<{ path: string; rank: number; args: string[] }> = [];
  const seen = new Set<string>();
  const add = (path: string, rank: number, args: string[]): void => {
    // A bind once per path (a pinned git directory may be a writable one); a tmpfs never stands in for a bind.
    const key = rank === 0 ? `tmpfs\0${path}` : path;
    if (seen.has(key)) return;
    seen.add(key);
    ops.push({ path, rank, args });
  };
  for (const dir of sandbox.hidden) if (isDir(dir)) add(dir, 0, ['--tmpfs', dir]);
  for (const dir of [sandbox.tmpDir, ...sandbox.writable]) add(dir, 1, ['--bind', dir, dir]);
  // -try: a pinned directory that is gone (objects/info never made) has nothing to pin.
  for (const dir of sandbox.pinned) add(dir, 2, ['--bind-try', dir, dir]);
  // -try: a protected path that could not be made has nothing to protect.
  for (const path of [...sandbox.readOnlyInside, ...sandbox.keepVisible]) add(path, 3, ['--ro-bind-try', path, path]);
  ops.sort((a, b) => depth(a.path) - depth(b.path) || a.rank - b.rank);
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', ...ops.flatMap((o) => o.args)];
  args.push('--unshare-pid', '--die-with-parent');
  if (!sandbox.network) args.push('--unshare-net');
  return args;
}
