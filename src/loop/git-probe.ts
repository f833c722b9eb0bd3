/**
 * What the loop runner asks git (SPEC §7.2): is this a repository, where is HEAD, what is dirty,
 * how many commits and which files changed since the run started. Every question has a safe
 * answer when git fails (not installed, a corrupt repository, a lock held by the agent's own
 * `git commit`): a failure never ends a loop, it only makes evidence unknown.
 */
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { resolveGitLocation, runOwnGit, type GitLocation } from '../sandbox/own-git.js';

/** git's well-known empty tree: what a repository with no commit at loop start is compared with. */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** One `git status --porcelain` entry. */
export interface GitStatusEntry {
  /** Two status letters, e.g. ` M`, `A `, `??`. */
  code: string;
  /** Path relative to the repository's working directory (the new path of a rename). */
  path: string;
}

/** The work tree as one `git status` shows it. */
export interface GitStatus {
  /** Dirty entries under cwd, paths relative to it. */
  entries: GitStatusEntry[];
  /** HEAD's commit; null before the first commit. */
  head: string | null;
}

/** The git questions the runner asks; an implementation never throws. */
export interface GitProbe {
  /** True inside a work tree. */
  isRepo(cwd: string): Promise<boolean>;
  /** `git rev-parse HEAD`; null before the first commit or on failure. */
  head(cwd: string): Promise<string | null>;
  /** Status of `cwd` and HEAD, in one git call; null on failure. */
  status(cwd: string): Promise<GitStatus | null>;
  /** Commits on HEAD since `start` (all of HEAD's when null); 0 on failure. */
  commitsSince(cwd: string, start: string | null): Promise<number>;
  /** Tracked files that differ between `from` (EMPTY_TREE when null) and the working tree, or `to` when given. */
  changedFiles(cwd: string, from: string | null, to?: string): Promise<string[]>;
}

/** For `git diff`: no external diff program, no textconv filter (both run configured commands), no submodule. */
const SAFE_DIFF_ARGS: readonly string[] = ['--no-ext-diff', '--no-textconv', '--ignore-submodules=all'];

/** Parses `git status --porcelain=v1 -z` output (a rename's old path follows its new one). */
export function parsePorcelainZ(text: string): GitStatusEntry[] {
  const parts = text.split('\0');
  const out: GitStatusEntry[] = [];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] ?? '';
    if (part.length < 4) continue;
    const code = part.slice(0, 2);
    out.push({ code, path: part.slice(3) });
    if (code.includes('R') || code.includes('C')) i++;
  }
  return out;
}

/** Fields before the path in a porcelain v2 entry, by entry kind. */
const V2_FIELDS: Readonly<Record<string, number>> = { '1': 8, '2': 9, u: 10 };

/**
 * Parses `git status --porcelain=v2 -z --branch`: the `# branch.oid` header gives HEAD (null
 * for `(initial)`), entries give status codes in v1's letters (`.` → space, untracked `??`).
 * Paths are as git prints them: relative to the repository root.
 */
export function parsePorcelainV2(text: string): GitStatus {
  const parts = text.split('\0');
  const entries: GitStatusEntry[] = [];
  let head: string | null = null;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] ?? '';
    if (part.startsWith('# branch.oid ')) {
      const oid = part.slice('# branch.oid '.length).trim();
      head = /^[0-9a-f]{7,64}$/.test(oid) ? oid : null;
      continue;
    }
    const kind = part.charAt(0);
    if (kind === '?' || kind === '!') {
      entries.push({ code: kind === '?' ? '??' : '!!', path: part.slice(2) });
      continue;
    }
    const n = V2_FIELDS[kind];
    if (n === undefined) continue;
    const fields = part.split(' ');
    if (fields.length <= n) continue;
    entries.push({ code: (fields[1] ?? '..').replace(/\./g, ' '), path: fields.slice(n).join(' ') });
    // A rename or copy: its original path is the next NUL-separated field.
    if (kind === '2') i++;
  }
  return { entries, head };
}

function lines(text: string | null): string[] {
  return text === null ? [] : text.split('\n').map((l) => l.trim()).filter((l) => l !== '');
}

/**
 * The real git, run as a child process the way navi runs git (sandbox/own-git.ts: nothing the
 * repository configures runs). Each working directory's repository is located at its first
 * question — for a loop, when the run opens, before the model ran anything — and every later
 * question names that repository: a `.git`, `commondir` or bare repository planted afterwards
 * is never read, and a directory that was no repository stays none for this probe.
 */
export function createGitProbe(): GitProbe {
  const located = new Map<string, Promise<GitLocation | null>>();
  const locate = (cwd: string): Promise<GitLocation | null> => {
    let p = located.get(cwd);
    if (p === undefined) {
      p = resolveGitLocation(cwd);
      located.set(cwd, p);
    }
    return p;
  };
  const git = async (cwd: string, args: readonly string[]): Promise<string | null> => {
    const at = await locate(cwd);
    return at === null ? null : runOwnGit(at, cwd, args);
  };
  return {
    async isRepo(cwd) {
      return (await locate(cwd)) !== null;
    },
    async head(cwd) {
      const out = await git(cwd, ['rev-parse', '--verify', '--quiet', 'HEAD']);
      const sha = out?.trim() ?? '';
      return /^[0-9a-f]{7,64}$/.test(sha) ? sha : null;
    },
    async status(cwd) {
      const at = await locate(cwd);
      if (at === null) return null;
      const out = await runOwnGit(at, cwd, ['status', '--porcelain=v2', '-z', '--branch', '--untracked-files=normal', '--ignore-submodules=all', '--', '.']);
      if (out === null) return null;
      // Porcelain paths are relative to the repository root whatever the cwd: strip the cwd's prefix.
      const st = parsePorcelainV2(out);
      return { head: st.head, entries: st.entries.map((e) => ({ code: e.code, path: e.path.startsWith(at.prefix) ? e.path.slice(at.prefix.length) : e.path })) };
    },
    async commitsSince(cwd, start) {
      const out = await git(cwd, ['rev-list', '--count', start === null ? 'HEAD' : `${start}..HEAD`]);
      const n = Number(out?.trim());
      return Number.isInteger(n) && n >= 0 ? n : 0;
    },
    async changedFiles(cwd, from, to) {
      const args = ['diff', ...SAFE_DIFF_ARGS, '--name-only', '--no-renames', '--relative', from ?? EMPTY_TREE];
      if (to !== undefined) args.push(to);
      return lines(await git(cwd, [...args, '--']));
    },
  };
}

/** The work tree's top folder, located as navi's own git calls locate it; null outside git. */
export async function workTreeRoot(cwd: string): Promise<string | null> {
  return (await resolveGitLocation(cwd))?.workTree ?? null;
}

/**
 * Dirty paths (status code + signature) before or after a turn; the signature, size and
 * modification time, is a file's identity for "did it change during this iteration".
 */
export type DirtySnapshot = ReadonlyMap<string, string>;

/** navi's own bookkeeping folder; nothing in it is the agent's work. */
const BOOKKEEPING = /^\.agent(?:\/|$)/;

/**
 * The dirty files of the work tree with a signature each, so two snapshots tell which files
 * changed in between (a file dirty before and after, edited again, has a new signature).
 */
export async function dirtySnapshot(cwd: string, entries: readonly GitStatusEntry[]): Promise<DirtySnapshot> {
  const snap = new Map<string, string>();
  await Promise.all(
    entries
      .filter((e) => !BOOKKEEPING.test(e.path))
      .map(async (e) => {
        let sig = 'gone';
        try {
          const st = await lstat(join(cwd, e.path));
          sig = `${st.size}:${st.mtimeMs}`;
        } catch {
          // Deleted: the status code says so; the signature stays 'gone'.
        }
        snap.set(e.path, `${e.code}|${sig}`);
      }),
  );
  return snap;
}

/** Paths whose dirty state differs between two snapshots (appeared, changed, or became clean). */
export function changedBetween(before: DirtySnapshot, after: DirtySnapshot): string[] {
  const out = new Set<string>();
  for (const [path, sig] of after) if (before.get(path) !== sig) out.add(path);
  for (const path of before.keys()) if (!after.has(path)) out.add(path);
  return [...out];
}

/** True when the status shows tracked files with uncommitted changes (untracked files do not count). */
export function hasTrackedChanges(entries: readonly GitStatusEntry[]): boolean {
  return entries.some((e) => e.code !== '??' && e.code !== '!!' && !BOOKKEEPING.test(e.path));
}

/** Untracked paths (folders end with `/`), bookkeeping excluded. */
export function untrackedPaths(entries: readonly GitStatusEntry[]): string[] {
  return entries.filter((e) => e.code === '??' && !BOOKKEEPING.test(e.path)).map((e) => e.path);
}
