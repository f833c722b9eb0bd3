/**
 * The token `navi serve` makes when none is given (SPEC §14, issue 35): 32 random bytes
 * (base64url), kept in `navi-serve-token` inside navi's data directory — the PGlite directory,
 * `0700` and re-tightened on every open — as a `0600` file. It is reused across restarts, so
 * scripts that read the file and a tab signed in before a restart keep working; deleting the file
 * makes a new one at the next start.
 *
 * A kept file is believed only when it is a regular file (no symlink followed), owned by the user
 * running navi and readable or writable by nobody else; anything else — someone else's file, one
 * another user could have read, a token of the wrong shape — is replaced by a new token (the
 * old one may have leaked), and the caller says so. Two servers starting together agree on one
 * token: the file is written under a fresh name and linked into place, which fails when the
 * other was first, and then its token is read.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, constants, fstatSync, linkSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, unlinkSync, writeSync, fsyncSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { InvalidInputError } from '../errors.js';
import { errnoCode } from '../util/guards.js';
import { isNaviDataDir } from '../store/open.js';

export const TOKEN_FILE = 'navi-serve-token';
/** What a generated token looks like (43 base64url characters); a kept file must hold one. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{32,128}$/;

export interface KeptToken {
  token: string;
  /** The file it is in. */
  file: string;
  /** 'created': new; 'kept': read from the file; 'replaced': the file was not trustworthy (`why`). */
  state: 'created' | 'kept' | 'replaced';
  why?: string;
}

/** The token file of a data directory. */
export function tokenFilePath(dataDir: string): string {
  return join(dataDir, TOKEN_FILE);
}

/** A new token: 256 random bits. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** What the stat of an opened token file says: null when it may be believed, else why not. */
export function untrustedBecause(st: { isFile(): boolean; uid: number; mode: number }, uid: number | undefined): string | null {
  if (!st.isFile()) return 'it is not a regular file';
  if (uid !== undefined && st.uid !== uid) return `it belongs to uid ${st.uid}, not to you`;
  if ((st.mode & 0o077) !== 0) return `others could read or change it (mode ${(st.mode & 0o777).toString(8)})`;
  return null;
}

const currentUid = (): number | undefined => (typeof process.getuid === 'function' ? process.getuid() : undefined);

/** The data directory, made (0700, with a private parent when that is new too) when missing; refused when not navi's or not the user's. */
function prepareDir(dir: string, uid: number | undefined): void {
  let names: string[] | null = null;
  try {
    names = readdirSync(dir);
  } catch (err) {
    if (errnoCode(err) !== 'ENOENT') throw new InvalidInputError('serve_token_dir', `cannot keep the serve token in ${dir} (${errnoCode(err) ?? String(err)}); give one with NAVI_SERVE_TOKEN or --token`);
  }
  if (names === null) {
    const parent = dirname(dir);
    const created = mkdirSync(parent, { recursive: true, mode: 0o700 });
    if (created !== undefined) chmodSync(parent, 0o700);
    mkdirSync(dir, { mode: 0o700 });
    chmodSync(dir, 0o700);
    return;
  }
  if (!isNaviDataDir(names)) {
    throw new InvalidInputError('data_dir_not_navi', `${dir} is not a navi data directory: the serve token is not kept there; set NAVI_DATA_DIR to navi's own directory, or give a token with NAVI_SERVE_TOKEN`);
  }
  const st = statSync(dir);
  if (uid !== undefined && st.uid !== uid) {
    throw new InvalidInputError('serve_token_dir', `${dir} belongs to uid ${st.uid}, not to you: the serve token is not kept there; give one with NAVI_SERVE_TOKEN or --token`);
  }
  // navi's data directory is private (PGlite's opening re-tightens it too).
  if ((st.mode & 0o077) !== 0) chmodSync(dir, 0o700);
}

/** The kept token, or why the file is not believed; null when there is no file. */
function readKept(file: string, uid: number | undefined): { token: string } | { why: string } | null {
  let fd: number;
  try {
    // O_NOFOLLOW: a symlink planted in its place is not followed; O_NONBLOCK: a FIFO does not block.
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') return { why: 'it is a symbolic link' };
    return { why: `it cannot be read (${code ?? String(err)})` };
  }
  try {
    const st = fstatSync(fd);
    const why = untrustedBecause(st, uid);
    if (why !== null) return { why };
    if (st.size > 1024) return { why: 'it does not hold a token' };
    const token = readFileSync(fd, 'utf8').trim();
    return TOKEN_SHAPE.test(token) ? { token } : { why: 'it does not hold a token' };
  } finally {
    closeSync(fd);
  }
}

/** Writes `token` to `file` unless a file is there already (then false). */
function createExclusive(file: string, token: string): boolean {
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    try {
      writeSync(fd, `${token}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    chmodSync(tmp, 0o600);
    try {
      linkSync(tmp, file);
      return true;
    } catch (err) {
      if (errnoCode(err) === 'EEXIST') return false;
      throw err;
    }
  } finally {
    unlinkSync(tmp);
  }
}

/**
 * The token kept in `dataDir`: read when the file is trustworthy, else made (and a file that is
 * not trustworthy replaced). Throws InvalidInputError (exit 2) when the directory cannot hold it.
 */
export function keepToken(dataDir: string, uid: number | undefined = currentUid()): KeptToken {
  const file = tokenFilePath(dataDir);
  try {
    prepareDir(dataDir, uid);
    let why: string | undefined;
    for (let attempt = 0; attempt < 5; attempt++) {
      const kept = readKept(file, uid);
      if (kept !== null && 'token' in kept) return why === undefined ? { token: kept.token, file, state: 'kept' } : { token: kept.token, file, state: 'replaced', why };
      if (kept !== null) {
        why ??= kept.why;
        unlinkSync(file);
      }
      const token = newToken();
      if (createExclusive(file, token)) return why === undefined ? { token, file, state: 'created' } : { token, file, state: 'replaced', why };
      // Another navi serve wrote it first: read theirs.
    }
    throw new InvalidInputError('serve_token_file', `${file} keeps changing under navi serve; give a token with NAVI_SERVE_TOKEN or --token`);
  } catch (err) {
    if (err instanceof InvalidInputError) throw err;
    throw new InvalidInputError('serve_token_file', `cannot keep the serve token in ${file} (${errnoCode(err) ?? String(err)}); give one with NAVI_SERVE_TOKEN or --token`);
  }
}
