/**
 * Helpers for the store tests: temporary directories and running a TypeScript snippet in a
 * separate Node process (to test the lock across processes).
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root (where node_modules and tsx live). */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A fresh private temporary directory. */
export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `navi-${prefix}-`));
}

/** Result of `runChild`. */
export interface ChildResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs an ES module snippet with tsx in a child process, from the repo root, so it can import
 * `./src/store/*.ts`. Resolves when the child exits.
 */
export function runChild(source: string, timeoutMs = 30_000): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', source], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The pid of a process that has already exited (for stale-lock tests). */
export function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  });
  return Number(child.stdout);
}
