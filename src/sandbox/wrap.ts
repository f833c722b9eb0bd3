/** How a shell command is started inside a sandbox: the program, its arguments and environment. */
import { statSync } from 'node:fs';
import { bwrapArgs } from './bwrap-args.js';
import { filterSandboxEnv } from './env-filter.js';
import type { Sandbox } from './modes.js';
import { seatbeltArgs } from './seatbelt-profile.js';

/** What to spawn instead of `/bin/sh -c command`. */
export interface SandboxedSpawn {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/**
 * The environment a command gets inside: the caller's as `sandbox.env` filters it (no secrets,
 * no pointers at sockets outside: env-filter.ts), its temp variables pointed at the private directory.
 */
export function sandboxEnv(sandbox: Pick<Sandbox, 'tmpDir' | 'env'>, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...filterSandboxEnv(env, sandbox.env), TMPDIR: sandbox.tmpDir, TMP: sandbox.tmpDir, TEMP: sandbox.tmpDir };
}

/** Asked at every spawn: a data directory made after the sandbox was prepared (PGlite's first open) is hidden too. */
function isDir(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
}

/** `/bin/sh -c command` inside `sandbox`. */
export function sandboxedSpawn(sandbox: Sandbox, command: string, env: NodeJS.ProcessEnv): SandboxedSpawn {
  const args = sandbox.kind === 'bwrap' ? bwrapArgs(sandbox, command, isDir) : seatbeltArgs(sandbox, command);
  return { file: sandbox.launcher, args, env: sandboxEnv(sandbox, env) };
}
