/**
 * Reading the small files users (or a cloned repository) hand navi — config, profile files,
 * task files — without trusting what they are. A FIFO would block `readFileSync` forever and a
 * symlink to `/dev/zero` would fill memory (its `st_size` is 0, so a size check alone passes),
 * so the file is opened `O_NONBLOCK`, `fstat`ed through the same descriptor (no window for the
 * path to be swapped), refused unless it is a regular file within a size cap, and read through
 * that descriptor, never past the cap.
 */

import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { InvalidInputError } from '../errors.js';
import { errnoCode } from '../util/guards.js';

/** Largest config or profile `config.json` read. Generous: a model name may be long, a config is never this big. */
export const MAX_CONFIG_FILE_BYTES = 4 * 1024 * 1024;

/** Largest prompt file (persona, system prompt, compression prompt) read: ~64k tokens, far beyond any context. */
export const MAX_PROMPT_FILE_BYTES = 256 * 1024;

/** What readUserFile needs besides the path. */
export interface ReadUserFileOptions {
  /** How the file is named in messages (`profiles/coder/config.json`). */
  display: string;
  /** InvalidInputError code (`config_invalid`, `profile_invalid`, `task_invalid`). */
  code: string;
  /** Bytes allowed; a larger file is refused before it is read. */
  maxBytes: number;
  /** What such a file is called in the size message, plural (`task files`); default `files like this`. */
  kind?: string;
}

/** A user file could not be read: exit 2, `<display>: <reason>`. */
export class UserFileError extends InvalidInputError {
  /** Why, without the file name (for callers that list problems under the file's name). */
  readonly reason: string;
  /** The errno code (`ENOENT`, `EACCES`…) when the operating system refused. */
  readonly fsCode: string | undefined;

  constructor(opts: ReadUserFileOptions, reason: string, fsCode?: string, cause?: unknown) {
    super(opts.code, `${opts.display}: ${reason}`, cause === undefined ? undefined : { cause });
    this.reason = reason;
    this.fsCode = fsCode;
  }
}

function sizeText(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MB` : `${Math.round(bytes / 1024)} KB`;
}

function tooBig(opts: ReadUserFileOptions, size: string): UserFileError {
  return new UserFileError(opts, `is ${size} bytes; ${opts.kind ?? 'files like this'} are limited to ${opts.maxBytes} bytes (${sizeText(opts.maxBytes)})`);
}

/**
 * The bytes of a regular file at `path`, at most `opts.maxBytes` of them. Throws UserFileError
 * (an InvalidInputError naming the file) when it is missing, unreadable, not a regular file
 * (directory, FIFO, socket, device) or too big.
 */
export function readUserFileBytes(path: string, opts: ReadUserFileOptions): Buffer {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO nobody writes to returns at once instead of waiting for a writer.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const code = errnoCode(err);
    const why =
      code === 'ENOENT'
        ? 'file not found'
        : code === 'EISDIR'
          ? 'is a directory, not a file'
          : code === 'EACCES'
            ? 'permission denied'
            : `cannot be read (${code ?? (err instanceof Error ? err.message : String(err))})`;
    throw new UserFileError(opts, why, code, err);
  }
  try {
    const info = fstatSync(fd);
    if (info.isDirectory()) throw new UserFileError(opts, 'is a directory, not a file', 'EISDIR');
    if (!info.isFile()) throw new UserFileError(opts, 'is not a regular file (a FIFO, socket or device); navi reads only regular files');
    if (info.size > opts.maxBytes) throw tooBig(opts, String(info.size));
    // Read through the descriptor, one byte past the cap: a file that grows while it is read
    // (or reports a size of 0, like those under /proc) is still refused, never read whole.
    const buf = Buffer.allocUnsafe(Math.min(opts.maxBytes, Math.max(info.size, 64 * 1024)) + 1);
    let length = 0;
    for (;;) {
      if (length === buf.length) break;
      const n = readSync(fd, buf, length, buf.length - length, null);
      if (n === 0) break;
      length += n;
    }
    if (length > opts.maxBytes) throw tooBig(opts, `over ${opts.maxBytes}`);
    // A file that grew past the first buffer but not past the cap: read the rest.
    if (length === buf.length) return Buffer.concat([buf.subarray(0, length), readRest(fd, opts, length)]);
    return buf.subarray(0, length);
  } catch (err) {
    if (err instanceof UserFileError) throw err;
    const code = errnoCode(err);
    throw new UserFileError(opts, `cannot be read (${code ?? (err instanceof Error ? err.message : String(err))})`, code, err);
  } finally {
    closeSync(fd);
  }
}

/** The rest of a file that was bigger than its `fstat` said, up to the cap. */
function readRest(fd: number, opts: ReadUserFileOptions, already: number): Buffer {
  const parts: Buffer[] = [];
  let total = already;
  const chunk = Buffer.allocUnsafe(64 * 1024);
  for (;;) {
    const n = readSync(fd, chunk, 0, chunk.length, null);
    if (n === 0) return Buffer.concat(parts);
    total += n;
    if (total > opts.maxBytes) throw tooBig(opts, `over ${opts.maxBytes}`);
    parts.push(Buffer.from(chunk.subarray(0, n)));
  }
}

/** readUserFileBytes decoded as UTF-8 (invalid sequences become U+FFFD, as readFileSync does). */
export function readUserFile(path: string, opts: ReadUserFileOptions): string {
  return readUserFileBytes(path, opts).toString('utf8');
}
