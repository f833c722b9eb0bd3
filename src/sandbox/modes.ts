/**
 * What `--sandbox` / config `sandbox` / a task's `sandbox` can say, and what a prepared sandbox
 * is. The folder sits at the bottom beside `util/`: tools (the shell tool's spawn), config (the
 * schema) and cli (the flag, doctor) all read it, and it imports nothing of theirs.
 */

/**
 * `off`: commands run as navi does. `workspace-write`: they read everything, write only the
 * working tree (its git directory included) and a private temp directory. `read-only`: they
 * write only the private temp directory. Both sandboxed modes cut the network unless
 * `sandbox.network` is true.
 */
export const SANDBOX_MODES = ['off', 'workspace-write', 'read-only'] as const;

export type SandboxMode = (typeof SANDBOX_MODES)[number];

/**
 * Off by default: a sandbox that cannot be set up is exit 2 (never a silent run without it),
 * so a default on would stop navi wherever bubblewrap is missing or user namespaces are off
 * (most Docker containers, macOS without a tested profile), and the cut network would break
 * every package install. Who leaves a loop alone with a repository turns it on, once, in config.
 */
export const DEFAULT_SANDBOX_MODE: SandboxMode = 'off';

/** `sandbox.env.inherit`: start from navi's whole environment (less the secrets) or from nothing. */
export const SANDBOX_ENV_INHERIT = ['all', 'none'] as const;

/**
 * Which of navi's environment variables a sandboxed command gets (`sandbox.env`, config only:
 * a task file cannot widen it). `include` names (globs) are passed even when the default rule
 * would drop them; `exclude` names are never passed. env-filter.ts applies it.
 */
export interface SandboxEnvPolicy {
  inherit: (typeof SANDBOX_ENV_INHERIT)[number];
  include: readonly string[];
  exclude: readonly string[];
}

export const DEFAULT_SANDBOX_ENV: SandboxEnvPolicy = { inherit: 'all', include: [], exclude: [] };

/** The configured policy: `sandbox` in config or a task file, `--sandbox` on the command line. */
export interface SandboxPolicy {
  mode: SandboxMode;
  /** Commands may reach the network (package installs). */
  network: boolean;
  /** The environment inside; the default when absent. */
  env?: SandboxEnvPolicy;
}

/** A sandbox ready to run commands in: probed, its temp directory made (prepare.ts). */
export interface Sandbox {
  mode: Exclude<SandboxMode, 'off'>;
  network: boolean;
  /** `bwrap` (Linux) or `sandbox-exec` (macOS). */
  kind: 'bwrap' | 'seatbelt';
  /** Absolute path of the launcher program. */
  launcher: string;
  /** The working tree; where commands start. */
  cwd: string;
  /** Directories commands may write besides `tmpDir` (the tree and its git directories; none when read-only). */
  writable: readonly string[];
  /**
   * Paths inside `writable` kept read-only: what decides where git looks or what it runs
   * (git-layout.ts). A git config or hook written inside would run outside (navi's own git
   * calls, the user's).
   */
  readOnlyInside: readonly string[];
  /**
   * Writable directories bound onto themselves so they are mount points: a mount point cannot be
   * renamed or removed, so a command cannot move a git directory (or `objects/info`) aside and
   * put one of its own making in its place.
   */
  pinned: readonly string[];
  /**
   * Directories replaced by an empty tmpfs inside (hidden-dirs.ts): where Unix sockets that lead
   * out live (`/tmp`, `/run`, `$XDG_RUNTIME_DIR`, navi's data directory). The tree, its git
   * directories and `tmpDir` stay visible where they lie inside one (their binds come after).
   */
  hidden: readonly string[];
  /** Paths inside `hidden` bound back read-only: the tree and its git directories (when not writable), `/etc/resolv.conf`'s target when the network is allowed. */
  keepVisible: readonly string[];
  /** Private temp directory of this navi process; `TMPDIR` points at it. */
  tmpDir: string;
  /** Which environment variables reach a command (env-filter.ts). */
  env: SandboxEnvPolicy;
}

/** `workspace-write` → `workspace-write, no network`: how doctor and messages name a policy. */
export function describePolicy(policy: SandboxPolicy): string {
  if (policy.mode === 'off') return 'off';
  return `${policy.mode}, ${policy.network ? 'network allowed' : 'no network'}`;
}
