/**
 * Path confinement (SPEC §10): every path a file tool touches must stay inside the working
 * directory, lexically and after following symlinks.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Sandbox } from '../sandbox/modes.js';
import { errnoCode } from '../util/guards.js';
import { isInside } from '../util/inside.js';
import { sandboxWriteRefusal } from './sandbox-write-rule.js';

/** A confined path, or why it was refused (worded for the model). */
export type ResolveResult =
  | {
      ok: true;
      /** Absolute path with every existing symlink resolved; use it for the file operation. */
      abs: string;
      /** Path relative to the working directory as the model named it (`.` for the directory itself). */
      rel: string;
    }
  | { ok: false; reason: string };

/**
 * Real path of `abs`, resolving its nearest existing ancestor and appending the parts that do
 * not exist yet. Refuses dangling symlinks: writing through one would create its target,
 * which may be anywhere.
 */
function realpathAllowingMissing(abs: string): { ok: true; real: string } | { ok: false; reason: string } {
  const missing: string[] = [];
  let current = abs;
  for (;;) {
    try {
      return { ok: true, real: path.join(fs.realpathSync(current), ...missing.reverse()) };
    } catch (err) {
      const code = errnoCode(err);
      if (code === 'ELOOP') return { ok: false, reason: 'symlink loop' };
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return { ok: false, reason: `cannot resolve path (${code ?? 'error'})` };
    }
    let exists = false;
    try {
      fs.lstatSync(current);
      exists = true;
    } catch {
      // Does not exist: go on with its parent.
    }
    if (exists) return { ok: false, reason: 'dangling symlink' };
    const parent = path.dirname(current);
    if (parent === current) return { ok: false, reason: 'no existing ancestor' };
    missing.push(path.basename(current));
    current = parent;
  }
}

/**
 * Resolves `userPath` (relative to `cwd`, or absolute but inside it) and checks it stays inside
 * `cwd`: refuses `..` escapes, absolute paths elsewhere, `~`, and symlinks that lead out
 * (the real path of the nearest existing ancestor must be inside the real `cwd`).
 */
export function resolveInside(cwd: string, userPath: string): ResolveResult {
  if (userPath.includes('\0')) return { ok: false, reason: 'path contains a NUL byte' };
  if (userPath === '~' || userPath.startsWith('~/')) {
    return { ok: false, reason: `'~' is not expanded; use a path relative to the working directory` };
  }
  let root: string;
  try {
    root = fs.realpathSync(cwd);
  } catch {
    return { ok: false, reason: `working directory ${cwd} does not exist` };
  }
  const base = path.resolve(cwd);
  const lexical = path.resolve(base, userPath === '' ? '.' : userPath);
  // An absolute path may name the working directory through its real path (e.g. /private/tmp).
  if (!isInside(base, lexical) && !isInside(root, lexical)) {
    return {
      ok: false,
      reason: path.isAbsolute(userPath)
        ? `absolute path ${userPath} is outside the working directory`
        : `${userPath} escapes the working directory`,
    };
  }
  const resolved = realpathAllowingMissing(lexical);
  if (!resolved.ok) return { ok: false, reason: `${userPath}: ${resolved.reason}` };
  if (!isInside(root, resolved.real)) {
    return { ok: false, reason: `${userPath} leads outside the working directory through a symlink` };
  }
  const rel = path.relative(isInside(base, lexical) ? base : root, lexical);
  return { ok: true, abs: resolved.real, rel: rel === '' ? '.' : rel };
}

/**
 * True when `rel` (a path relative to the working directory) has a component named `.git`, in
 * any case (case-insensitive file systems): git's own directory, or a worktree's `.git` file.
 */
export function inGitDir(rel: string): boolean {
  return rel.split(/[\\/]/).some((part) => part.toLowerCase() === '.git');
}

/**
 * `resolveInside` for tools that write: also refuses anything inside a `.git` directory, named
 * directly or reached through a symlink. Git runs commands named in `.git/config`
 * (`core.fsmonitor`, filters, aliases) and `.git/hooks/` — navi's own loop-mode `git status`
 * among them — so writing there is running code. Under `--sandbox`, also what the sandbox
 * refuses a command (sandbox-write-rule.ts): every write when it is read-only.
 */
export function resolveWritable(cwd: string, userPath: string, sandbox?: Pick<Sandbox, 'mode' | 'readOnlyInside'>): ResolveResult {
  const resolved = resolveInside(cwd, userPath);
  if (!resolved.ok) return resolved;
  const real = path.relative(fs.realpathSync(cwd), resolved.abs);
  if (inGitDir(resolved.rel) || inGitDir(real)) {
    return { ok: false, reason: `${userPath} is inside .git/; git runs commands from its config and hooks, so file tools do not write there` };
  }
  const refused = sandboxWriteRefusal(sandbox, [resolved.abs, path.resolve(cwd, resolved.rel)], userPath);
  if (refused !== null) return { ok: false, reason: refused };
  return resolved;
}
