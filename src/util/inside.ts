/** Whether one absolute path lies inside another, lexically (callers resolve symlinks first). */
import path from 'node:path';

/** `candidate` is `root` or inside it (both absolute). Only a `..` component escapes: `...`, `..foo` and `..\x` are ordinary names. */
export function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}
