/**
 * The migrated PGlite data directory navi ships (issue 11, item 5): a new store is unpacked from
 * it instead of running PostgreSQL's initdb inside WebAssembly (~3 s and ~300 MiB at first
 * run) — the first run then costs what every later one does (~0.3 s more for the unpacking).
 *
 * `npm run build` makes `dist/pgdata-template.tar.gz` (scripts/build.js: a data directory
 * created by initdb, migrated, closed cleanly, then packed with `packDataDir`); the shipped
 * migrations still run on open, so an older template only means more of them to apply. Without
 * the file (a build that could not make one) navi falls back to initdb.
 *
 * The archive is a gzip'd POSIX tar (ustar) of regular files and directories, readable by any
 * `tar`. It is unpacked with Node's own zlib (far faster than PGlite's `loadDataDir`, which
 * goes through the emscripten file system). Crash safety: `PG_VERSION` — what PGlite looks at
 * to decide "existing database" — is written last, after every other file, and a marker file
 * says an unpacking is under way, so an interrupted one is cleared and redone by the next open.
 */
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { packagePath } from '../package-root.js';

/** Where the build puts the template. */
export function pgdataTemplatePath(): string {
  return packagePath('dist', 'pgdata-template.tar.gz');
}

/** The file whose presence makes a directory a database (PGlite's and PostgreSQL's own test). */
export const VERSION_FILE = 'PG_VERSION';

const BLOCK = 512;

/** One archive member. */
export interface TarEntry {
  /** Relative, `/`-separated, no `.`/`..` segments. */
  path: string;
  type: 'file' | 'dir';
  data: Uint8Array;
}

/** Why an archive is refused; the caller falls back to initdb. */
export class TemplateError extends Error {
  override name = 'TemplateError';
}

/**
 * A member's name made safe to join under the data directory: leading `/` and `./` dropped
 * (PGlite's own dumps name members `/base/1/…`), `..` or empty segments refused.
 */
export function confinedName(raw: string): string {
  const parts = raw.replace(/^(?:\.?\/)+/, '').replace(/\/+$/, '').split('/');
  if (parts.length === 0 || parts.some((p) => p === '' || p === '.' || p === '..' || p.includes('\0'))) throw new TemplateError(`unsafe member name ${JSON.stringify(raw)}`);
  return parts.join('/');
}

const text = (b: Uint8Array, start: number, len: number): string => {
  const field = b.subarray(start, start + len);
  const end = field.indexOf(0);
  return Buffer.from(end < 0 ? field : field.subarray(0, end)).toString('utf8');
};

const octal = (b: Uint8Array, start: number, len: number): number => {
  const s = text(b, start, len).trim();
  if (!/^[0-7]+$/.test(s)) throw new TemplateError(`bad numeric field ${JSON.stringify(s)}`);
  return parseInt(s, 8);
};

/** Reads a ustar archive (regular files and directories only; anything else is refused). */
export function readTar(tar: Uint8Array): TarEntry[] {
  const out: TarEntry[] = [];
  let at = 0;
  while (at + BLOCK <= tar.length) {
    const header = tar.subarray(at, at + BLOCK);
    if (header.every((byte) => byte === 0)) return out;
    const sum = octal(header, 148, 8);
    let check = 0;
    for (let i = 0; i < BLOCK; i++) check += i >= 148 && i < 156 ? 0x20 : (header[i] ?? 0);
    if (check !== sum) throw new TemplateError(`header checksum mismatch at byte ${at}`);
    const prefix = text(header, 345, 155);
    const name = confinedName(prefix ? `${prefix}/${text(header, 0, 100)}` : text(header, 0, 100));
    const size = octal(header, 124, 12);
    const flag = String.fromCharCode(header[156] ?? 0);
    at += BLOCK;
    if (at + size > tar.length) throw new TemplateError(`${name}: archive truncated`);
    if (flag === '0' || flag === '\0') out.push({ path: name, type: 'file', data: tar.subarray(at, at + size) });
    else if (flag === '5') out.push({ path: name, type: 'dir', data: new Uint8Array(0) });
    else throw new TemplateError(`${name}: member type ${JSON.stringify(flag)} is not a file or directory`);
    at += Math.ceil(size / BLOCK) * BLOCK;
  }
  throw new TemplateError('archive has no end marker');
}

function header(name: string, type: 'file' | 'dir', size: number): Buffer {
  const h = Buffer.alloc(BLOCK);
  let rest = name;
  let prefix = '';
  if (Buffer.byteLength(rest) > 100) {
    const cut = rest.lastIndexOf('/', 155);
    if (cut <= 0 || Buffer.byteLength(rest.slice(cut + 1)) > 100) throw new TemplateError(`${name}: name too long for ustar`);
    prefix = rest.slice(0, cut);
    rest = rest.slice(cut + 1);
  }
  const field = (value: string, start: number, len: number): void => void h.write(value, start, len, 'utf8');
  const num = (value: number, start: number, len: number): void => field(`${value.toString(8).padStart(len - 1, '0')}\0`, start, len);
  field(rest, 0, 100);
  num(type === 'dir' ? 0o700 : 0o600, 100, 8);
  num(0, 108, 8);
  num(0, 116, 8);
  num(size, 124, 12);
  num(0, 136, 12); // mtime: fixed, so the same directory packs to the same bytes
  field(type === 'dir' ? '5' : '0', 156, 1);
  field('ustar\0', 257, 6);
  field('00', 263, 2);
  field(prefix, 345, 155);
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of h) sum += byte;
  field(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8);
  return h;
}

/** Writes a ustar archive of `entries` (in the given order). */
export function writeTar(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    parts.push(header(confinedName(e.path), e.type, e.data.length));
    if (e.type === 'file') {
      parts.push(Buffer.from(e.data));
      const pad = (BLOCK - (e.data.length % BLOCK)) % BLOCK;
      if (pad) parts.push(Buffer.alloc(pad));
    }
  }
  parts.push(Buffer.alloc(BLOCK * 2));
  return Buffer.concat(parts);
}

/**
 * Packs a closed data directory (sorted, so the same directory gives the same bytes) with
 * `PG_VERSION` last; navi's own files (its lock, the memory cache) are left out.
 */
export function packDataDir(dataDir: string): Buffer {
  const entries: TarEntry[] = [];
  const walk = (rel: string): void => {
    for (const d of fs.readdirSync(path.join(dataDir, rel), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const name = rel ? `${rel}/${d.name}` : d.name;
      if (!rel && (d.name === VERSION_FILE || d.name.startsWith('navi'))) continue;
      if (d.isDirectory()) {
        entries.push({ path: name, type: 'dir', data: new Uint8Array(0) });
        walk(name);
      } else if (d.isFile()) entries.push({ path: name, type: 'file', data: fs.readFileSync(path.join(dataDir, name)) });
    }
  };
  walk('');
  entries.push({ path: VERSION_FILE, type: 'file', data: fs.readFileSync(path.join(dataDir, VERSION_FILE)) });
  return zlib.gzipSync(writeTar(entries), { level: 9 });
}

/** Present while a template is being unpacked: what it finds without `PG_VERSION` is navi's to clear. */
const UNPACKING = 'navi-unpacking';

/**
 * Unpacks the template into `dataDir` when it holds no database yet: empty but for navi's own
 * files (its lock), or holding what an interrupted unpacking left (the `navi-unpacking` marker is
 * still there: cleared and redone). A directory with anything else in it is never touched (a
 * `NAVI_DATA_DIR` pointed at a folder of the user's): PGlite decides, as without a template.
 * Directories come first (parents before children: the archive's order), then the files,
 * `PG_VERSION` last. Returns whether it unpacked; false also when there is no template
 * (PGlite then runs initdb). Throws when unpacking failed (what it wrote is cleared first).
 */
export async function unpackTemplate(dataDir: string, archive = pgdataTemplatePath()): Promise<boolean> {
  if (fs.existsSync(path.join(dataDir, VERSION_FILE))) return false;
  const names = fs.readdirSync(dataDir);
  const interrupted = names.includes(UNPACKING);
  if (!interrupted && names.some((n) => !n.startsWith('navi'))) return false;
  let gz: Buffer;
  try {
    gz = await fs.promises.readFile(archive);
  } catch {
    return false;
  }
  const marker = path.join(dataDir, UNPACKING);
  fs.writeFileSync(marker, '', { mode: 0o600 });
  if (interrupted) clearLeftovers(dataDir);
  try {
    // Off the main thread (zlib and file writes run in libuv's pool): start-up goes on meanwhile.
    const entries = readTar(await gunzip(gz));
    const version = entries.find((e) => e.path === VERSION_FILE && e.type === 'file');
    if (!version) throw new TemplateError(`no ${VERSION_FILE} in the template`);
    const target = (e: TarEntry): string => path.join(dataDir, ...e.path.split('/'));
    for (const e of entries) if (e.type === 'dir') fs.mkdirSync(target(e), { recursive: true, mode: 0o700 });
    // allSettled: nothing may still be writing when a failure clears the directory.
    const writes = await Promise.allSettled(entries.filter((e) => e.type === 'file' && e !== version).map((e) => fs.promises.writeFile(target(e), e.data, { mode: 0o600 })));
    const failed = writes.find((w) => w.status === 'rejected');
    if (failed) throw failed.reason;
    // Everything else is on disk before the file that makes the directory a database.
    fs.writeFileSync(target(version), version.data, { mode: 0o600 });
    fs.rmSync(marker);
    return true;
  } catch (err) {
    clearLeftovers(dataDir);
    fs.rmSync(marker, { force: true });
    throw err;
  }
}

const gunzip = promisify(zlib.gunzip);

/** Removes everything but navi's own files (written by an unpacking: see `unpackTemplate`). */
function clearLeftovers(dataDir: string): void {
  for (const name of fs.readdirSync(dataDir)) {
    if (!name.startsWith('navi')) fs.rmSync(path.join(dataDir, name), { recursive: true, force: true });
  }
}
