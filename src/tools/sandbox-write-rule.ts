/**
 * What the file tools may write under `--sandbox` (SPEC §16: "the file tools obey the same
 * mode"). `write_file` and `edit_file` run in navi's own process, outside the sandbox, so they
 * refuse by themselves what the sandbox would refuse a command: under `read-only` every write,
 * under `workspace-write` the paths kept read-only inside the tree (a git directory's config,
 * hooks and what else decides where git looks or what it runs; navi's own `.nav-config.json` and
 * `.mcp.json`). Writes outside the working
 * tree are refused with or without a sandbox (paths.ts). Pure, so each rule has a table test.
 */
import type { Sandbox } from '../sandbox/modes.js';
import { naviConfigRole } from '../sandbox/navi-config-paths.js';
import { isInside } from '../util/inside.js';

/**
 * Why the sandbox forbids writing the file at `abs` (its absolute paths: as named and with
 * symlinks resolved), worded for the model; null when it may. `shown` is the path as the model
 * named it. No sandbox: null (the confinement and `.git/` rules of paths.ts still apply).
 */
export function sandboxWriteRefusal(
  sandbox: Pick<Sandbox, 'mode' | 'readOnlyInside'> | undefined,
  abs: readonly string[],
  shown: string,
): string | null {
  if (sandbox === undefined) return null;
  if (sandbox.mode === 'read-only') {
    return `the sandbox is read-only (--sandbox read-only): no file may be written, ${shown} included; say in your answer what should change instead`;
  }
  const kept = sandbox.readOnlyInside.find((p) => abs.some((a) => isInside(p, a)));
  const configRole = kept === undefined ? undefined : naviConfigRole(kept);
  if (configRole !== undefined) return `the sandbox keeps ${shown} read-only: ${configRole}; say in your answer what should change instead`;
  if (kept !== undefined) {
    return `the sandbox keeps ${shown} read-only (${kept}): git runs what its config and hooks say, outside the sandbox`;
  }
  return null;
}
