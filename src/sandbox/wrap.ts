/** How a shell command is started inside a sandbox: the program, its arguments and environment. */
import { bwrapArgs } from './bwrap-args.js';
import type { Sandbox } from './modes.js';
import { seatbeltArgs } from './seatbelt-profile.js';

/** What to spawn instead of `/bin/sh -c command`. */
export interface SandboxedSpawn {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/** The environment a command gets inside: the caller's, its temp variables pointed at the private directory. */
export function sandboxEnv(sandbox: Sandbox, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, TMPDIR: sandbox.tmpDir, TMP: sandbox.tmpDir, TEMP: sandbox.tmpDir };
}

/** `/bin/sh -c command` inside `sandbox`. */
export function sandboxedSpawn(sandbox: Sandbox, command: string, env: NodeJS.ProcessEnv): SandboxedSpawn {
  const args = sandbox.kind === 'bwrap' ? bwrapArgs(sandbox, command) : seatbeltArgs(sandbox, command);
  return { file: sandbox.launcher, args, env: sandboxEnv(sandbox, env) };
}
