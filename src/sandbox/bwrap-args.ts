/**
 * The bubblewrap command line of one sandboxed command (Linux). Pure, so each rule has a test.
 *
 * - `--ro-bind / /` first: everything reads as on the host and nothing writes; later binds
 *   lay the writable directories over it, then the paths inside them that must stay read-only.
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

/** `bwrap` arguments that run `/bin/sh -c command` inside `sandbox`. */
export function bwrapArgs(sandbox: Sandbox, command: string): string[] {
  return [...bwrapMounts(sandbox), '--chdir', sandbox.cwd, '--', '/bin/sh', '-c', command];
}

/** The namespace and mount part, shared by every command and the start-up probe. */
export function bwrapMounts(sandbox: Pick<Sandbox, 'network' | 'writable' | 'readOnlyInside' | 'tmpDir'>): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  for (const dir of [sandbox.tmpDir, ...sandbox.writable]) args.push('--bind', dir, dir);
  // -try: a repository without hooks has nothing to protect there.
  for (const path of sandbox.readOnlyInside) args.push('--ro-bind-try', path, path);
  args.push('--unshare-pid', '--die-with-parent');
  if (!sandbox.network) args.push('--unshare-net');
  return args;
}
