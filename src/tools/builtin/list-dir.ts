import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import { resolveInside } from '../paths.js';

/** Entries listed per call; a directory with more is generated data, not something to read whole. */
const MAX_ENTRIES = 500;

/** `list_dir {path?}`: a directory's entries, sorted, directories suffixed with `/`. */
export const listDirTool = defineTool({
  name: 'list_dir',
  description: 'List a directory (default: the working directory); subdirectories end with /.',
  schema: z.object({ path: z.string().optional() }),
  async execute(args, ctx) {
    const resolved = resolveInside(ctx.cwd, args.path ?? '.');
    if (!resolved.ok) return { ok: false, output: `refused: ${resolved.reason}` };
    const info = await stat(resolved.abs).catch(() => undefined);
    if (!info) return { ok: false, output: `${resolved.rel}: no such directory` };
    if (!info.isDirectory()) return { ok: false, output: `${resolved.rel} is not a directory; use read_file` };
    const entries = await readdir(resolved.abs, { withFileTypes: true });
    const names = await Promise.all(
      entries.map(async (entry) => {
        let isDir = entry.isDirectory();
        if (entry.isSymbolicLink()) {
          isDir = (await stat(path.join(resolved.abs, entry.name)).catch(() => undefined))?.isDirectory() ?? false;
        }
        return isDir ? `${entry.name}/` : entry.name;
      }),
    );
    // Code-point order: stable across locales, so the same directory always lists the same way.
    names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    if (names.length === 0) return { ok: true, output: `(${resolved.rel} is empty)` };
    const shown = names.slice(0, MAX_ENTRIES);
    const more = names.length - shown.length;
    return { ok: true, output: shown.join('\n') + (more > 0 ? `\n[… ${more} more entries]` : '') };
  },
});
