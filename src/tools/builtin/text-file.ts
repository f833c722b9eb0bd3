/**
 * Opening files the model names, safely: confined to the working directory, regular files only
 * (a FIFO or device would block or never end), text only.
 */
import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import type { Sandbox } from '../../sandbox/modes.js';
import { errnoCode } from '../../util/guards.js';
import { resolveInside, resolveWritable } from '../paths.js';

/** Bytes sniffed for NUL to call a file binary (what git and grep do). */
export const BINARY_SNIFF_BYTES = 8 * 1024;

/** Largest file edit_file loads whole; bigger files are not source files the model should patch. */
export const MAX_EDIT_BYTES = 4 * 1024 * 1024;

/** An open regular file, or the result to hand the model when it could not be opened. */
export type Opened =
  | { ok: true; handle: FileHandle; abs: string; rel: string; size: number }
  | { ok: false; output: string };

/**
 * Resolves and opens `userPath` for reading (`forEdit`: a file about to be rewritten, so never
 * one inside `.git/` nor one `sandbox` keeps read-only). `O_NONBLOCK` makes opening a FIFO return at once instead of waiting for
 * a writer; `fstat` on the opened handle then refuses anything that is not a regular file, with
 * no window for the path to be swapped in between.
 */
export async function openRegularFile(cwd: string, userPath: string, opts: { forEdit?: boolean; sandbox?: Sandbox } = {}): Promise<Opened> {
  const resolved = opts.forEdit === true ? resolveWritable(cwd, userPath, opts.sandbox) : resolveInside(cwd, userPath);
  if (!resolved.ok) return { ok: false, output: `refused: ${resolved.reason}` };
  let handle: FileHandle;
  try {
    handle = await open(resolved.abs, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT') return { ok: false, output: `${resolved.rel}: no such file` };
    if (code === 'EISDIR') return { ok: false, output: `${resolved.rel} is a directory; use list_dir` };
    throw err;
  }
  const stat = await handle.stat();
  if (!stat.isFile()) {
    await handle.close();
    const what = stat.isDirectory() ? 'a directory; use list_dir' : 'not a regular file (FIFO, socket or device)';
    return { ok: false, output: `${resolved.rel} is ${what}` };
  }
  return { ok: true, handle, abs: resolved.abs, rel: resolved.rel, size: stat.size };
}

/** True when the first bytes of the file contain a NUL byte. */
export async function looksBinary(handle: FileHandle, size: number): Promise<boolean> {
  const buf = Buffer.alloc(Math.min(BINARY_SNIFF_BYTES, size));
  const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
  return buf.subarray(0, bytesRead).includes(0);
}
