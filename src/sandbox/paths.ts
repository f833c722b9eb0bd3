/** Path comparisons the sandbox's rules share (pure). */
import { isAbsolute, relative, sep } from 'node:path';

/** `path` is `dir` or inside it. */
export function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** How deep a path is (`/` 0, `/a` 1, `/a/b` 2): mounts are laid parents first. */
export function depth(path: string): number {
  return path.split(sep).filter((part) => part !== '').length;
}
