/**
 * The environment a sandboxed command gets (SPEC §16). A sandbox that hides `~/.aws` but hands
 * the command `AWS_SECRET_ACCESS_KEY` has hidden nothing, and the redaction of tool output is
 * no fence (`env | base64` passes it): secrets are not passed at all. Nor are variables that
 * point at a Unix socket outside (`TMUX`, `SSH_AUTH_SOCK`, `DBUS_SESSION_BUS_ADDRESS`): the
 * mounts hide the sockets (hidden-dirs.ts), and a command should not be told where they are.
 *
 * Like codex's `shell_environment_policy` (inherit, default excludes, include/exclude globs),
 * smaller: `sandbox.env: { inherit: "all" | "none", include: [globs], exclude: [globs] }`.
 */
import { DEFAULT_SANDBOX_ENV, type SandboxEnvPolicy } from './modes.js';

/** Names holding one of these words (any case) are secrets by default. */
const SECRET_WORDS = /KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL/i;

/** Other names dropped by default: a database URL with its password, navi's own settings, pointers at sockets outside. */
const DEFAULT_DROPPED: readonly string[] = [
  'DATABASE_URL',
  'NAVI_*',
  'TMUX',
  'TMUX_PANE',
  'SSH_AUTH_SOCK',
  'SSH_AGENT_PID',
  'GPG_AGENT_INFO',
  'DBUS_*',
  'XDG_RUNTIME_DIR',
  'DOCKER_HOST',
  'WAYLAND_DISPLAY',
  'DISPLAY',
];

/**
 * What navi itself sets for a sandboxed user-tool call (tools/user-tool-sandboxed.ts): the
 * channel to the tool's process, never the user's environment, so `NAVI_*` does not drop it.
 */
const NAVI_CHANNEL = /^NAVI_(?:NODE|TOOL_[A-Z_]+)$/;

/** `*` matches any run of characters, `?` one; everything else literally. Case-sensitive, as names are. */
export function envGlob(pattern: string): RegExp {
  const body = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

function matchesAny(name: string, globs: readonly RegExp[]): boolean {
  return globs.some((g) => g.test(name));
}

const DEFAULT_DROPPED_GLOBS = DEFAULT_DROPPED.map(envGlob);

/** True when the default rule keeps `name` out of the sandbox. */
export function droppedByDefault(name: string): boolean {
  if (NAVI_CHANNEL.test(name)) return false;
  return SECRET_WORDS.test(name) || matchesAny(name, DEFAULT_DROPPED_GLOBS);
}

/**
 * The variables of `env` that `policy` passes: `exclude` wins over everything; `include` wins
 * over the default rule; with `inherit: "none"` only `include` (and navi's channel) passes.
 */
export function filterSandboxEnv(env: NodeJS.ProcessEnv, policy: SandboxEnvPolicy = DEFAULT_SANDBOX_ENV): NodeJS.ProcessEnv {
  const include = policy.include.map(envGlob);
  const exclude = policy.exclude.map(envGlob);
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || matchesAny(name, exclude)) continue;
    const included = matchesAny(name, include);
    const pass = included || (policy.inherit === 'all' && !droppedByDefault(name)) || NAVI_CHANNEL.test(name);
    if (pass) out[name] = value;
  }
  return out;
}
