/**
 * The live page's files (src/serve/page/, copied to dist/serve/page/ by the build), served at `/`
 * with their content types. The files hold no data — the page reads everything from the API,
 * which needs the token when one is set — so they are served without one: a browser opening
 * the page cannot send a header before the page has asked for the token.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { packagePath } from '../package-root.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webmanifest': 'application/manifest+json',
  '.txt': 'text/plain; charset=utf-8',
};

/** The content type of a file name (octet-stream when unknown). */
export function contentType(file: string): string {
  return TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';
}

/** Where the page's files are: the built copy, else the sources (tsx, vitest). */
export function pageDir(): string | null {
  for (const dir of [packagePath('dist', 'serve', 'page'), packagePath('src', 'serve', 'page')]) if (existsSync(dir)) return dir;
  return null;
}

/** The file a URL path names inside `root` (`/` → index.html), or null when it would leave it. */
export function pageFile(root: string, urlPath: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const rel = decoded === '/' || decoded === '' ? 'index.html' : decoded.replace(/^\/+/, '');
  const full = normalize(join(root, rel));
  return full === root || full.startsWith(root.endsWith(sep) ? root : root + sep) ? full : null;
}

/** A page file's bytes and type, or null (no page, no such file). */
export async function readPageFile(urlPath: string): Promise<{ body: Buffer; type: string } | null> {
  const root = pageDir();
  if (root === null) return null;
  const file = pageFile(root, urlPath);
  if (file === null || file.endsWith('.ts')) return null;
  try {
    return { body: await readFile(file), type: contentType(file) };
  } catch {
    return null;
  }
}
