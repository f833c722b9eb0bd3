import type { Dirent } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import { resolveInside } from '../paths.js';
import { redactBeforeCut } from '../redact.js';
import { matchLines, matchLinesInWorker, type MatchOutcome } from '../regex-worker.js';
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
/**
 * Longest a search may take, in seconds (lowered to `tools.shell.timeout_s`, the user's bound on
 * one command). A whole tree within the file limits is searched in well under a second; a
 * pattern that takes longer backtracks catastrophically.
 */
export const SEARCH_TIMEOUT_S = 30;
/** Text sent to the regex worker per message: few round trips, bounded memory. */
const BATCH_BYTES = 4 * 1024 * 1024;

const REGEX_SPECIAL = /[.*+?^${}()|[\]\\]/;

/**
 * How a pattern is searched: text without regex syntax, or that is not a valid regex (`foo(`),
 * literally on this thread (linear time); a regex in the worker (`regex-worker.ts`), where a
 * catastrophic one can be stopped.
 */
export function searchMode(pattern: string): { kind: 'literal'; text: string } | { kind: 'regex'; re: RegExp } {
  if (!REGEX_SPECIAL.test(pattern)) return { kind: 'literal', text: pattern };
  try {
    return { kind: 'regex', re: new RegExp(pattern) };
  } catch {
    return { kind: 'literal', text: pattern };
  }
}

/** Lines containing `literal` (`matchLines`; a text without it is not split into lines at all). */
function matchLiteral(literal: string, texts: readonly string[], limit: number): MatchOutcome {
  const candidates = texts.map((text) => (text.includes(literal) ? text : ''));
  return { ok: true, matches: matchLines(candidates, (line) => line.includes(literal), limit) };
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
    const mode = searchMode(args.pattern);
    const shown = mode.kind === 'regex' ? mode.re.toString() : JSON.stringify(mode.text);
    const timeoutS = Math.min(SEARCH_TIMEOUT_S, ctx.shell.timeoutS);
    const deadline = Date.now() + timeoutS * 1000;
    const shownRoot = resolved.rel === '.' ? '' : resolved.rel;
    const results: string[] = [];
    let files = 0;
    let truncated = false;
    let stopped: 'timeout' | null = null;

    // Files read but not yet matched: matched a batch at a time, in walk order.
    let batch: Array<{ shown: string; text: string }> = [];
    let batchBytes = 0;
    const flush = async (): Promise<void> => {
      if (batch.length === 0 || truncated || stopped !== null) return;
      const texts = batch.map((b) => b.text);
      const limit = MAX_MATCHES - results.length + 1;
      const outcome =
        mode.kind === 'literal'
          ? matchLiteral(mode.text, texts, limit)
          : await matchLinesInWorker(mode.re.source, texts, limit, { signal: ctx.signal, deadline });
      if (!outcome.ok) {
        if (outcome.reason === 'aborted') ctx.signal.throwIfAborted();
        if (outcome.reason === 'failed') throw new Error(`search failed: ${outcome.detail ?? 'unknown error'}`);
        stopped = 'timeout';
        return;
      }
      outcome.matches.forEach((lineIndexes, f) => {
        const file = batch[f];
        if (file === undefined || truncated) return;
        const lines = file.text.split('\n');
        for (const i of lineIndexes) {
          if (results.length >= MAX_MATCHES) {
            truncated = true;
            return;
          }
          const trimmed = (lines[i] ?? '').trim();
          // Redacted here, at the cut: a secret straddling it would otherwise leave its first
          // characters, which the registry's redaction of whole values cannot recognise.
          const cut = trimmed.length > MAX_LINE_CHARS ? `${redactBeforeCut(ctx.redact, trimmed.slice(0, MAX_LINE_CHARS))}…` : trimmed;
          results.push(`${file.shown}:${i + 1}: ${cut}`);
        }
      });
      batch = [];
      batchBytes = 0;
    };

    const searchFile = async (abs: string, shownPath: string): Promise<void> => {
      files++;
      const text = await readTextFile(abs).catch(() => undefined);
      if (text === undefined) return;
      batch.push({ shown: shownPath, text });
      batchBytes += text.length;
      if (batchBytes >= BATCH_BYTES) await flush();
    };

    if (root.isFile()) {
      await searchFile(resolved.abs, resolved.rel);
    } else {
      // Depth-first, entries sorted: the same tree always yields the same results in the same order.
      // Stack entries are paths relative to the searched directory.
      const stack: string[] = [''];
      while (stack.length > 0 && !truncated && stopped === null) {
        ctx.signal.throwIfAborted();
        if (Date.now() >= deadline) {
          stopped = 'timeout';
          break;
        }
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
            if (truncated || stopped !== null) break;
          }
        }
        stack.push(...subdirs.reverse());
      }
    }
    await flush();
    if (stopped !== null) {
      const found = results.length > 0 ? `; ${results.length} matches before it stopped:\n${results.join('\n')}` : '';
      return {
        ok: false,
        output: `search timed out after ${timeoutS} s: ${shown} backtracks too much or there is too much to search; simplify the pattern or narrow the path${found}`,
      };
    }
    if (results.length === 0) {
      return { ok: true, output: `no matches for ${shown} in ${resolved.rel}${truncated ? ' (search stopped early)' : ''}` };
    }
    const note = truncated ? `\n[stopped after ${results.length} matches in ${files} files; narrow the pattern or path]` : '';
    return { ok: true, output: results.join('\n') + note };
  },
});
