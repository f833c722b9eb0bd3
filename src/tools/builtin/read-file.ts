import { z } from 'zod';
import type { FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { defineTool } from '../define-tool.js';
import { redactBeforeCut, type RedactFn } from '../redact.js';
import { looksBinary, openRegularFile } from './text-file.js';

/**
 * Text returned per call. Below the registry's 32 KiB cap so the paging hint at the end
 * survives, and ~6k tokens: the model pages with offset/limit rather than flooding its context.
 */
const READ_BUDGET_BYTES = 24 * 1024;

/** Bytes read from disk per step. */
const CHUNK_BYTES = 64 * 1024;

interface Page {
  lines: string[];
  /** Number of the last line returned (0 when none). */
  lastLine: number;
  /** Lines in the file, known only when it was read to the end. */
  totalLines?: number;
  /** Stopped before the end: limit or budget reached. */
  more: boolean;
}

/**
 * Reads lines `offset…offset+limit-1` in chunks, keeping at most the budget in memory, so a
 * huge file (or one enormous line) costs no more than a small one.
 */
async function readPage(handle: FileHandle, offset: number, limit: number, redact: RedactFn): Promise<Page> {
  const lines: string[] = [];
  let used = 0;
  let lineNo = 0;
  let partial = '';
  let partialFull = false;
  let stop = false;
  const emit = (line: string): void => {
    lineNo++;
    if (lineNo < offset) return;
    const text = line.endsWith('\r') ? line.slice(0, -1) : line;
    const cost = Buffer.byteLength(text) + 1;
    if (lines.length >= limit || (used + cost > READ_BUDGET_BYTES && lines.length > 0)) {
      stop = true;
      return;
    }
    // A cut line is redacted at the cut, so no start of a secret the cut split survives.
    lines.push(used + cost > READ_BUDGET_BYTES ? `${redactBeforeCut(redact, text.slice(0, READ_BUDGET_BYTES / 2))}…[line truncated]` : text);
    used += cost;
  };
  const buf = Buffer.alloc(CHUNK_BYTES);
  // Keeps a UTF-8 sequence split across two chunks whole.
  const decoder = new StringDecoder('utf8');
  let position = 0;
  while (!stop) {
    const { bytesRead } = await handle.read(buf, 0, buf.length, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const chunk = decoder.write(buf.subarray(0, bytesRead));
    let start = 0;
    for (let nl = chunk.indexOf('\n'); nl !== -1 && !stop; nl = chunk.indexOf('\n', start)) {
      emit(partialFull ? partial : partial + chunk.slice(start, nl));
      partial = '';
      partialFull = false;
      start = nl + 1;
    }
    if (!stop && !partialFull) {
      partial += chunk.slice(start);
      // One line longer than the budget is cut anyway; stop accumulating it.
      if (partial.length > READ_BUDGET_BYTES) {
        partial = partial.slice(0, READ_BUDGET_BYTES + 1);
        partialFull = true;
      }
    }
  }
  if (!stop && !partialFull) partial += decoder.end();
  if (!stop && partial !== '') emit(partial);
  const lastLine = lines.length > 0 ? offset + lines.length - 1 : 0;
  return stop ? { lines, lastLine, more: true } : { lines, lastLine, totalLines: lineNo, more: false };
}

/** `read_file {path, offset?, limit?}`: a text file, or a page of its lines. */
export const readFileTool = defineTool({
  name: 'read_file',
  description: 'Read a text file. offset (1-based line) and limit page through large files.',
  // Numbers are coerced: local models often send "10" for 10.
  schema: z.object({
    path: z.string(),
    offset: z.coerce.number().int().min(1).optional(),
    limit: z.coerce.number().int().min(1).optional(),
  }),
  async execute(args, ctx) {
    const opened = await openRegularFile(ctx.cwd, args.path);
    if (!opened.ok) return opened;
    const { handle, rel, size } = opened;
    try {
      if (size === 0) return { ok: true, output: '(empty file)' };
      if (await looksBinary(handle, size)) return { ok: false, output: `${rel}: binary file, ${size} bytes` };
      const offset = args.offset ?? 1;
      const page = await readPage(handle, offset, args.limit ?? Number.MAX_SAFE_INTEGER, ctx.redact);
      if (page.lines.length === 0) {
        return { ok: false, output: `${rel} has ${page.totalLines ?? 0} lines; offset ${offset} is past the end` };
      }
      const paged = args.offset !== undefined || args.limit !== undefined;
      const of = page.totalLines !== undefined ? ` of ${page.totalLines}` : '';
      const header = paged ? `[${rel} lines ${offset}-${page.lastLine}${of}]\n` : '';
      const footer = page.more ? `\n[more lines follow; continue with offset=${page.lastLine + 1}]` : '';
      return { ok: true, output: header + page.lines.join('\n') + footer };
    } finally {
      await handle.close();
    }
  },
});
