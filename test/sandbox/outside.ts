/**
 * Where the sandbox tests put what a model's command must not be able to write: outside the
 * working tree, and outside /tmp and the other directories a sandbox may replace with a private
 * empty one (a write there would vanish, or fail with ENOENT, rather than be refused as
 * read-only). /var/tmp is neither, and outlives nothing: each test removes its own.
 */
import fs from 'node:fs';
import path from 'node:path';
import { onTestFinished } from 'vitest';

/** The directory the markers go under. */
export const OUTSIDE_BASE = '/var/tmp';

/** A fresh directory under OUTSIDE_BASE; the caller removes it. */
export function makeOutsideDir(prefix: string): string {
  return fs.mkdtempSync(path.join(OUTSIDE_BASE, `navi-outside-${prefix}-`));
}

/** A fresh directory under OUTSIDE_BASE, removed when the current test ends. */
export function outsideDir(prefix = 'marker'): string {
  const dir = makeOutsideDir(prefix);
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}
