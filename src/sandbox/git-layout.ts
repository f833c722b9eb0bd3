/**
 * What of a repository a sandboxed command may write (SPEC §16). Commits must work, so the
 * tree and its git directories are writable; but what decides where git looks or what it runs
 * stays read-only, because the next `git status` outside the sandbox — navi's or the user's —
 * would obey it: `config` (`core.fsmonitor`, filters), `config.worktree`, `hooks/`, `info/`
 * (attributes that name a filter), `commondir` (where the config is read from), a linked
 * worktree's `gitdir` and `.git` file, `objects/info/alternates`.
 *
 * Two holes a read-only bind alone leaves, and what closes them:
 * - A path that does not exist yet (`commondir` of an ordinary repository) can be created: a
 *   bind needs something to mount on. navi creates it first, on the host, with content that
 *   means what its absence meant (`commondir` ".", the others empty: git reads an empty
 *   `commondir` as an error but "." as the git directory itself), and leaves it there: removing
 *   it while another navi's sandbox has it mounted would unmount it there.
 * - A directory holding a read-only mount can still be renamed, and a fresh one of the
 *   command's making put in its place (`mv .git/objects x; mkdir -p .git/objects/info`). The
 *   git directories and the directories between them and a protected path are bound onto
 *   themselves ("pinned"): a mount point cannot be renamed or removed.
 *
 * Pure: prepare.ts gathers the facts and makes the placeholders.
 */
import { dirname, join } from 'node:path';
import type { Sandbox } from './modes.js';
import { isInside } from '../util/inside.js';

/** Where a repository's parts are, as `git rev-parse` answered at the start (absolute, real). */
export interface GitFacts {
  /** `--git-dir`: the worktree's own git directory (in a linked worktree, `<common>/worktrees/<id>`). */
  gitDir: string;
  /** `--git-common-dir`: config, hooks, objects and refs; the same as gitDir outside a linked worktree. */
  commonDir: string;
  /** `--show-toplevel`. */
  workTree: string;
  /** What `<workTree>/.git` is: the git directory, a `gitdir:` file (linked worktree, submodule), or something else. */
  dotGit: 'dir' | 'file' | 'other';
  /** The administrative directories of every linked worktree (`<common>/worktrees/*`). */
  worktrees: readonly string[];
  /**
   * Submodules' git directories (`<common>/modules/**`): `git status` in the superproject runs
   * git in each submodule, which reads that directory's config. Optional: none when absent.
   */
  modules?: readonly string[];
  /** The `.git` files of checked-out submodules in the tree (`sub/.git`: `gitdir: ../.git/modules/sub`). */
  submoduleDotGits?: readonly string[];
}

/** A path kept read-only inside and, when missing, the content it is created with first. */
export interface ControlPath {
  path: string;
  /** A directory (made empty when missing) or a file (written with `placeholder` when missing). */
  kind: 'dir' | 'file';
  /** File content with the meaning of the file's absence; undefined: never created (git does not read it when absent, or it always exists). */
  placeholder?: string;
}

/** The protected paths and pinned directories of one repository. */
export interface GitControl {
  control: ControlPath[];
  pinned: string[];
}

/** The paths of the common directory that steer git. */
function commonControl(common: string): ControlPath[] {
  return [
    { path: join(common, 'config'), kind: 'file' },
    { path: join(common, 'config.worktree'), kind: 'file', placeholder: '' },
    { path: join(common, 'hooks'), kind: 'dir' },
    { path: join(common, 'info'), kind: 'dir' },
    // Absent, git takes the directory itself as the common one; "." says the same.
    { path: join(common, 'commondir'), kind: 'file', placeholder: '.\n' },
    { path: join(common, 'objects', 'info', 'alternates'), kind: 'file', placeholder: '' },
  ];
}

/** A linked worktree's administrative directory: where its config and the common directory are found. */
function worktreeControl(admin: string): ControlPath[] {
  return [
    { path: join(admin, 'commondir'), kind: 'file' },
    { path: join(admin, 'gitdir'), kind: 'file' },
    { path: join(admin, 'config.worktree'), kind: 'file', placeholder: '' },
    { path: join(admin, 'info'), kind: 'dir' },
  ];
}

/** The protected paths and pinned directories for `facts`. */
export function gitControl(facts: GitFacts): GitControl {
  const { commonDir, gitDir } = facts;
  const admins = [...new Set([...(gitDir !== commonDir ? [gitDir] : []), ...facts.worktrees])];
  const modules = facts.modules ?? [];
  const control = [...commonControl(commonDir), ...admins.flatMap(worktreeControl), ...modules.flatMap(commonControl)];
  if (facts.dotGit === 'file') control.push({ path: join(facts.workTree, '.git'), kind: 'file' });
  for (const dotGit of facts.submoduleDotGits ?? []) control.push({ path: dotGit, kind: 'file' });
  const pinned = [commonDir, join(commonDir, 'objects'), join(commonDir, 'objects', 'info'), gitDir];
  if (admins.length > 0) pinned.push(join(commonDir, 'worktrees'), ...admins);
  for (const module of modules) {
    // Every directory from the superproject's git directory down to the submodule's, so none can be moved aside.
    for (let dir = module; dir.length > commonDir.length && isInside(commonDir, dir); dir = dirname(dir)) pinned.push(dir);
    pinned.push(join(module, 'objects'), join(module, 'objects', 'info'));
  }
  return { control, pinned: [...new Set(pinned)].sort((a, b) => a.localeCompare(b)) };
}

/**
 * The writable directories, the read-only paths inside them and the pinned ones. The tree is
 * writable, and so are its git directories where they lie outside it (a subdirectory of a
 * repository, a linked worktree): commits must work. `read-only` writes nothing of either.
 */
export function writableLayout(
  mode: Sandbox['mode'],
  cwd: string,
  git: GitFacts | null,
): Pick<Sandbox, 'writable' | 'readOnlyInside' | 'pinned'> {
  if (mode === 'read-only') return { writable: [], readOnlyInside: [], pinned: [] };
  if (git === null) return { writable: [cwd], readOnlyInside: [], pinned: [] };
  const outside = [...new Set([git.gitDir, git.commonDir])].filter((dir) => !isInside(cwd, dir));
  const { control, pinned } = gitControl(git);
  return { writable: [cwd, ...outside], readOnlyInside: control.map((c) => c.path), pinned };
}
