/**
 * Finding a task file from what the user typed (issue 18 item 7): a path (with or without
 * `.yaml`), a file name under `tasks/`, or the `name:` that `navi tasks list` prints — in the
 * project's `tasks/`, then navi's shipped examples. Shared by `navi loop` and `navi tasks show`.
 */
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { InvalidInputError, printable } from '../errors.js';
import { validateTaskFile } from '../loop/task-file.js';
import { packagePath } from '../package-root.js';
import { editDistance } from './shorthand.js';

export interface TaskFileEntry {
  /** Absolute path. */
  path: string;
  /** As shown: relative to cwd when inside it. */
  display: string;
  source: 'project' | 'shipped';
}

/** Examples shipped with navi (`tasks/` at the package root). */
const SHIPPED_DIR = packagePath('tasks');

/** Names this many edits away (or containing what was typed) are offered as "near". */
const NEAR_DISTANCE = 3;

const YAML = /\.ya?ml$/i;

function yamlFiles(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((n) => YAML.test(n))
      .sort()
      .map((n) => join(dir, n));
  } catch {
    return [];
  }
}

function display(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel.startsWith('..') ? path : rel;
}

function realpath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** The project's task files, then shipped examples not already listed. */
export function taskFiles(cwd: string, withShipped: boolean): TaskFileEntry[] {
  const project = yamlFiles(join(cwd, 'tasks')).map((path): TaskFileEntry => ({ path, display: display(path, cwd), source: 'project' }));
  if (!withShipped) return project;
  const seen = new Set(project.map((e) => realpath(e.path)));
  const shipped = yamlFiles(SHIPPED_DIR)
    .filter((p) => !seen.has(realpath(p)))
    .map((path): TaskFileEntry => ({ path, display: display(path, cwd), source: 'shipped' }));
  return [...project, ...shipped];
}

/** A word that can only be a file: it has a directory part, a YAML extension, or starts like a path. */
export function looksLikePath(word: string): boolean {
  return /[\\/]/.test(word) || YAML.test(word) || /^[.~]/.test(word);
}

/** The names a task can be called by: its file name without extension and its `name:`. */
function namesOf(entry: TaskFileEntry): string[] {
  const base = basename(entry.path).replace(YAML, '');
  const named = validateTaskFile(entry.path, entry.display).task?.name;
  return named !== undefined && named !== base ? [base, named] : [base];
}

/**
 * The task file `ref` names, or null: a file (as typed, or with `.yaml`/`.yml` added), then a
 * file name or `name:` under `tasks/` (project first, then shipped).
 */
export function findTaskFile(ref: string, cwd: string): TaskFileEntry | null {
  for (const candidate of [ref, `${ref}.yaml`, `${ref}.yml`]) {
    const path = resolve(cwd, candidate);
    if (isFile(path)) return { path, display: candidate, source: 'project' };
  }
  // `tasks/make-done` when the file is elsewhere: the name is what counts.
  const name = /^tasks[\\/][^\\/]+$/.test(ref) ? ref.slice('tasks/'.length).replace(YAML, '') : ref;
  if (looksLikePath(name)) return null;
  const entries = taskFiles(cwd, true);
  for (const e of entries) if (basename(e.path).replace(YAML, '') === name) return e;
  for (const e of entries) if (namesOf(e).includes(name)) return e;
  return null;
}

/** Task names close to what was typed (for "no task named …"). */
export function nearTaskNames(ref: string, cwd: string): string[] {
  const typed = basename(ref).replace(YAML, '').toLowerCase();
  const names = [...new Set(taskFiles(cwd, true).flatMap(namesOf))];
  return names.filter((n) => {
    const lower = n.toLowerCase();
    return editDistance(lower, typed) <= NEAR_DISTANCE || (typed.length >= 3 && (lower.includes(typed) || typed.includes(lower)));
  });
}

/** The exit-2 error for a task reference that names nothing. */
export function taskNotFound(ref: string, cwd: string): InvalidInputError {
  const near = nearTaskNames(ref, cwd);
  const hint = near.length > 0 ? `; near: ${near.join(', ')}` : '';
  return new InvalidInputError('task_not_found', `no task named '${printable(ref)}' (a task file, or a name from navi tasks list)${hint}; see: navi tasks list`);
}
