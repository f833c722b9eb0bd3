/**
 * Where user tool modules are found (user-tools.ts loads them): the directories navi scans and the
 * loadable files in them. Reading a directory runs nothing; which files would be imported (= run)
 * is decided here, so a project's own build scripts in `./tools/` are never touched.
 */
import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { errorLine } from './user-tool-errors.js';

/** Directory scanned in the working directory even when no config names it. */
export const DEFAULT_USER_TOOLS_DIR = 'tools';

const LOADABLE = new Set(['.js', '.mjs', '.cjs']);
const TYPESCRIPT = new Set(['.ts', '.mts', '.cts', '.tsx']);

/** A directory to scan; an `optional` one may be missing (the default `./tools/`). */
export interface UserToolDir {
  path: string;
  optional: boolean;
}

/** The directories navi scans: `<cwd>/tools` if present, then each configured (absolute) path. */
export function userToolDirs(cwd: string, configured: readonly string[] = []): UserToolDir[] {
  const dirs = [{ path: path.resolve(cwd, DEFAULT_USER_TOOLS_DIR), optional: true }];
  for (const dir of configured) {
    const resolved = path.resolve(cwd, dir);
    const same = dirs.find((d) => d.path === resolved);
    // Configuring `./tools` explicitly makes it required rather than scanning it twice.
    if (same) same.optional = false;
    else dirs.push({ path: resolved, optional: false });
  }
  return dirs;
}

/**
 * Whether a file's source mentions what a tool module must export (`execute` and `parameters`).
 * A build script in the project's ./tools/ mentions neither, so it is never imported (= run).
 */
export function looksLikeToolModule(source: string): boolean {
  return /\bexecute\b/.test(source) && /\bparameters\b/.test(source);
}

export interface ModuleFile {
  file: string;
  display: string;
}

/** The loadable files of every directory (a plain string is a configured one and must exist), in order; missing or unreadable directories become problems. */
export async function listModules(dirs: readonly (string | UserToolDir)[], display: (file: string) => string, problems: string[]): Promise<ModuleFile[]> {
  const files: ModuleFile[] = [];
  const seen = new Set<string>();
  for (const entry of dirs) {
    const dir = typeof entry === 'string' ? { path: entry, optional: false } : entry;
    const dirPath = path.resolve(dir.path);
    if (seen.has(dirPath)) continue;
    seen.add(dirPath);
    let names: string[];
    try {
      if (!(await stat(dirPath)).isDirectory()) {
        problems.push(`${display(dirPath)}: not a directory (user tools directory)`);
        continue;
      }
      names = (await readdir(dirPath)).sort();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && dir.optional) continue;
      problems.push(
        code === 'ENOENT'
          ? `${display(dirPath)}: user tools directory not found (config tools.paths)`
          : `${display(dirPath)}: cannot read user tools directory: ${errorLine(err)}`,
      );
      continue;
    }
    const present = new Set(names);
    for (const name of names) {
      if (name.startsWith('.') || name.startsWith('_') || /\.d\.[mc]?ts$/.test(name)) continue;
      const ext = path.extname(name);
      const file = path.join(dirPath, name);
      if (TYPESCRIPT.has(ext)) {
        const base = name.slice(0, -ext.length);
        if (![...LOADABLE].some((js) => present.has(base + js))) {
          problems.push(
            `${display(file)}: TypeScript cannot be loaded directly; compile it to ${base}.js (or rename it to ${base}.mjs if it is plain JavaScript)`,
          );
        }
        continue;
      }
      if (!LOADABLE.has(ext)) continue;
      try {
        if (!(await stat(file)).isFile()) continue;
        // Importing runs a module's code. In the default ./tools/ (which many projects use for
        // their own scripts) only files that look like navi tools are imported; a directory the
        // user configured is trusted as a whole.
        if (dir.optional && !looksLikeToolModule(await readFile(file, 'utf8'))) continue;
      } catch {
        continue; // a dangling symlink is not a module
      }
      files.push({ file, display: display(file) });
    }
  }
  return files;
}
