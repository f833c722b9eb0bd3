import type { Dirent } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import { resolveInside } from '../paths.js';
import { redactBeforeCut } from '../redact.js';
import { BINARY_SNIFF_BYTES } from './text-file.js';

/** Matches returned; past this the pattern is too broad to be useful to the model. */
const MAX_MATCHES = 200;
/** Characters of a matching line shown (minified files have megabyte lines). */
const MAX_LINE_CHARS = 200;
/** Files larger than this are data or bundles, not source worth searching. */
const MAX_FILE_BYTES = 2 * 1024 * 1024;
/** Files examined per call, so a search from the root of a huge tree still returns. */
const MAX_FILES = 20_000;
/** Directories never worth searching: dependencies, VCS data, build output. */
const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', '.hg', '.svn', 'coverage', '.next', '__pycache__']);

/** A valid regex is used as one; anything else (`foo(`) is searched for literally. */
function compile(pattern: string): RegExp {
  try {
    return new RegExp(pattern);
  } catch {
    return new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  }
}

async function readTextFile(file: string): Promise<string | undefined> {
  const handle = await open(file, 'r');
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size > MAX_FILE_BYTES) return undefined;
    const buf = await handle.readFile();
    if (buf.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return undefined;
    return buf.toString('utf8');
  } finally {
    await handle.close();
  }
}

/** `search_files {pattern, path?}`: `file:line: text` for each matching line under path. */
export const searchFilesTool = defineTool({
  name: 'search_files',
  description: 'Search text files under path for a regex (or literal text); returns file:line: text.',
  schema: z.object({ pattern: z.string().min(1), path: z.string().optional() }),
  async execute(args, ctx) {
    const resolved = resolveInside(ctx.cwd, args.path ?? '.');
    if (!resolved.ok) return { ok: false, output: `refused: ${resolved.reason}` };
    const root = await stat(resolved.abs).catch(() => undefined);
    if (!root) return { ok: false, output: `${resolved.rel}: no such file or directory` };
    const re = compile(args.pattern);
    const shownRoot = resolved.rel === '.' ? '' : resolved.rel;
    const results: string[] = [];
    let files = 0;
    let truncated = false;

    const searchFile = async (abs: string, shown: string): Promise<void> => {
      files++;
      const text = await readTextFile(abs).catch(() => undefined);
      if (text === undefined) return;
      const lines = text.split('\n');
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i] ?? '';
        if (!re.test(line)) continue;
        if (results.length >= MAX_MATCHES) {
          truncated = true;
          return;
        }
        const trimmed = line.trim();
        // Redacted here, at the cut: a secret straddling it would otherwise leave its first
        // characters, which the registry's redaction of whole values cannot recognise.
        const cut = trimmed.length > MAX_LINE_CHARS ? `${redactBeforeCut(ctx.redact, trimmed.slice(0, MAX_LINE_CHARS))}…` : trimmed;
        results.push(`${shown}:${i + 1}: ${cut}`);
      }
    };

    if (root.isFile()) {
      await searchFile(resolved.abs, resolved.rel);
    } else {
      // Depth-first, entries sorted: the same tree always yields the same results in the same order.
      // Stack entries are paths relative to the searched directory.
      const stack: string[] = [''];
      while (stack.length > 0 && !truncated) {
        ctx.signal.throwIfAborted();
        const dir = stack.pop() ?? '';
        let entries: Dirent[];
        try {
          entries = await readdir(path.join(resolved.abs, dir), { withFileTypes: true });
        } catch {
          continue;
        }
        entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
        const subdirs: string[] = [];
        for (const entry of entries) {
          const sub = dir === '' ? entry.name : `${dir}/${entry.name}`;
          // Symlinks are not followed: they could lead out of the working directory or loop.
          if (entry.isDirectory()) {
            if (!SKIP_DIRS.has(entry.name)) subdirs.push(sub);
          } else if (entry.isFile()) {
            if (files >= MAX_FILES) {
              truncated = true;
              break;
            }
            await searchFile(path.join(resolved.abs, sub), shownRoot === '' ? sub : `${shownRoot}/${sub}`);
            if (truncated) break;
          }
        }
        stack.push(...subdirs.reverse());
      }
    }
    if (results.length === 0) {
      return { ok: true, output: `no matches for ${re.toString()} in ${resolved.rel}${truncated ? ' (search stopped early)' : ''}` };
    }
    const note = truncated ? `\n[stopped after ${results.length} matches in ${files} files; narrow the pattern or path]` : '';
    return { ok: true, output: results.join('\n') + note };
  },
});
