/**
 * Where Unix sockets that lead out of the sandbox live, replaced by an empty tmpfs inside (SPEC
 * §16). A cut network stops TCP, not a Unix socket: with `/tmp` and `/run` visible a command
 * drives a tmux server (`/tmp/tmux-UID/default`: `send-keys` types into the user's shells),
 * PostgreSQL (`/run/postgresql`), the session D-Bus and ssh-agent (`$XDG_RUNTIME_DIR`), and
 * navi's own PGlite socket in its data directory (a memory planted there steers every later
 * run). A socket file on a read-only mount still connects; only its absence stops it.
 *
 * `/var/run` is a symlink to `/run` on current systems (prepare.ts resolves and dedupes). The
 * host's temp directory (when not `/tmp`) goes too: PGlite puts its socket there when the data
 * directory's path is too long for one. `/dev/shm` is private already (`--dev /dev`).
 *
 * Pure: prepare.ts passes the environment and resolves the paths.
 */
import { isAbsolute, join } from 'node:path';

/** What decides the hidden directories. */
export interface HiddenInputs {
  env: Record<string, string | undefined>;
  /** navi's data directories: the configured one and the default one (other navi processes use it). */
  dataDirs: readonly string[];
  /** The host's temp directory (`os.tmpdir()`). */
  tmpdir: string;
}

/** Always hidden. */
export const SOCKET_DIRS: readonly string[] = ['/tmp', '/run', '/var/run'];

/** The directories to hide, in no particular order (bwrap-args.ts orders the mounts). */
export function hiddenDirs(inputs: HiddenInputs): string[] {
  const runtime = inputs.env.XDG_RUNTIME_DIR;
  const dirs = [...SOCKET_DIRS, inputs.tmpdir, ...inputs.dataDirs];
  if (runtime !== undefined && isAbsolute(runtime)) dirs.push(runtime);
  return [...new Set(dirs.filter((d) => isAbsolute(d) && d !== '/'))];
}

/**
 * navi's default data directory from the environment alone: the rule of store/open.ts's
 * defaultDataDir (the sandbox may not import the store; a test keeps them equal). Its parent
 * `navi/` is hidden whole: it also holds what `navi serve` keeps beside the database.
 */
export function defaultDataRoot(env: Record<string, string | undefined>, home: string): string {
  if (env.NAVI_DATA_DIR) return env.NAVI_DATA_DIR;
  const xdg = env.XDG_DATA_HOME;
  const dataHome = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || home, '.local', 'share');
  return join(dataHome, 'navi');
}
