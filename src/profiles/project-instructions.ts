/**
 * Project instructions, the convention of codex (`AGENTS.md`), Claude Code (`CLAUDE.md`) and
 * gemini-cli (`GEMINI.md`): the instruction files from the repository root down to the working
 * directory go into the one system message (SPEC §8), read once per run so the message is the
 * same bytes for every call. In each directory `AGENTS.md` is used, else `CLAUDE.md`, else
 * `GEMINI.md`. Outside a git repository only the working directory is searched (as codex does):
 * a file in some parent of an unrelated directory is not the project's.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { readUserFile } from '../config/read-user-file.js';
import { fillPrompt, loadPrompt } from '../prompts.js';

/** Names looked for in each directory, first found wins. */
export const INSTRUCTION_FILE_NAMES = ['AGENTS.md', 'CLAUDE.md', 'GEMINI.md'] as const;

/**
 * Most bytes of instructions sent (codex's `project_doc_max_bytes` default): every request
 * carries them and a local model prefills every byte; the rest is cut with a note saying so.
 */
export const MAX_INSTRUCTION_BYTES = 32 * 1024;

/** A file that is larger than this is refused (exit 2) rather than read: it is not instructions. */
const MAX_INSTRUCTION_FILE_BYTES = 1024 * 1024;

export interface InstructionFile {
  /** Absolute path. */
  path: string;
  /** Relative to the repository root (or the working directory): how the model sees it named. */
  name: string;
  /** Size of the file. */
  bytes: number;
  /** Bytes of it that went into the system message (less than `bytes` when cut at the cap). */
  used: number;
}

export interface ProjectInstructions {
  /** The repository root searched from, or null outside a git repository. */
  root: string | null;
  files: InstructionFile[];
  /** The system-message section; '' when no file was found. */
  text: string;
}

/** The nearest directory at or above `dir` holding `.git` (a directory, or a worktree's file). */
export function repositoryRoot(dir: string): string | null {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, '.git'))) return d;
    if (dirname(d) === d) return null;
  }
}

/** Directories from the root down to `cwd`. */
function searchedDirs(cwd: string, root: string | null): string[] {
  if (root === null) return [cwd];
  const dirs: string[] = [];
  for (let d = cwd; ; d = dirname(d)) {
    dirs.unshift(d);
    if (d === root || dirname(d) === d) return dirs;
  }
}

function instructionFileIn(dir: string): string | null {
  for (const name of INSTRUCTION_FILE_NAMES) {
    const path = join(dir, name);
    try {
      // A directory with the name is skipped; anything else is read strictly (readUserFile
      // refuses FIFOs, devices and huge files with exit 2 naming the file).
      if (!statSync(path).isDirectory()) return path;
    } catch {
      // absent
    }
  }
  return null;
}

/** Finds and reads the instruction files for `cwd`. Throws UserFileError (exit 2) for a bad one. */
export function findProjectInstructions(cwd: string): ProjectInstructions {
  const root = repositoryRoot(cwd);
  const base = root ?? cwd;
  const files: InstructionFile[] = [];
  const sections: string[] = [];
  let budget = MAX_INSTRUCTION_BYTES;
  for (const dir of searchedDirs(cwd, root)) {
    const path = instructionFileIn(dir);
    if (path === null) continue;
    const name = relative(base, path) || path;
    const content = readUserFile(path, {
      display: path,
      code: 'instructions_invalid',
      maxBytes: MAX_INSTRUCTION_FILE_BYTES,
      kind: 'instruction files',
    })
      .replace(/\r\n/g, '\n')
      .trim();
    const bytes = Buffer.byteLength(content);
    let kept = content;
    if (bytes > budget) kept = `${cutToBytes(content, budget)}\n[… ${name} cut here: project instructions are limited to ${MAX_INSTRUCTION_BYTES} bytes]`;
    const used = Math.min(bytes, budget);
    budget -= used;
    files.push({ path, name, bytes, used });
    if (kept.length > 0) sections.push(`### ${name}\n${kept}`);
  }
  if (sections.length === 0) return { root, files, text: '' };
  const names = [...new Set(files.map((f) => f.name.split('/').at(-1) ?? f.name))].join(', ');
  return { root, files, text: fillPrompt(loadPrompt('agent/project-instructions.md'), { names, files: sections.join('\n\n') }) };
}

/** The longest prefix of `text` within `bytes` UTF-8 bytes, not splitting a character. */
function cutToBytes(text: string, bytes: number): string {
  const buf = Buffer.from(text).subarray(0, bytes);
  // A cut inside a multi-byte character decodes to U+FFFD at the end: drop it.
  return buf.toString('utf8').replace(/\uFFFD$/, '');
}
