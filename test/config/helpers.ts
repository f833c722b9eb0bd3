import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** A scratch directory with a `write(relPath, content)` helper; call `cleanup()` after the test. */
export interface Scratch {
  root: string;
  write: (rel: string, content: string | object) => string;
  cleanup: () => void;
}

export function scratch(): Scratch {
  const root = mkdtempSync(join(tmpdir(), 'navi-config-test-'));
  return {
    root,
    write(rel, content) {
      const path = join(root, rel);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
      return path;
    },
    cleanup() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The error `fn` throws (fails the test when it does not throw). */
export function thrown(fn: () => unknown): Error & { code?: string; exitCode?: number } {
  try {
    fn();
  } catch (err) {
    if (err instanceof Error) return err;
    throw new Error(`threw a non-Error: ${String(err)}`, { cause: err });
  }
  throw new Error('expected an error, none was thrown');
}
