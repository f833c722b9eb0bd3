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

/** The configured policy: `sandbox` in config or a task file, `--sandbox` on the command line. */
export interface SandboxPolicy {
  mode: SandboxMode;
  /** Commands may reach the network (package installs). */
  network: boolean;
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
  /** Paths inside `writable` kept read-only: a git config or hook written inside would run outside (navi's own git calls, the user's). */
  readOnlyInside: readonly string[];
  /** Private temp directory of this navi process; `TMPDIR` points at it. */
  tmpDir: string;
}

/** `workspace-write` → `workspace-write, no network`: how doctor and messages name a policy. */
export function describePolicy(policy: SandboxPolicy): string {
  if (policy.mode === 'off') return 'off';
  return `${policy.mode}, ${policy.network ? 'network allowed' : 'no network'}`;
}
