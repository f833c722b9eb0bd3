/** Path comparisons the sandbox's rules share (pure). */
import { sep } from 'node:path';

/** How deep a path is (`/` 0, `/a` 1, `/a/b` 2): mounts are laid parents first. */
export function depth(path: string): number {
  return path.split(sep).filter((part) => part !== '').length;
}
