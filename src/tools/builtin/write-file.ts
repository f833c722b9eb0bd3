import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import { resolveWritable } from '../paths.js';

/** `write_file {path, content}`: creates or replaces a file, creating parent directories (never inside `.git/`, nothing under `--sandbox read-only`). */
export const writeFileTool = defineTool({
  name: 'write_file',
  description: 'Create or overwrite a file; parent directories are created.',
  schema: z.object({ path: z.string(), content: z.string() }),
  async execute(args, ctx) {
    const resolved = resolveWritable(ctx.cwd, args.path, ctx.shell.sandbox);
    if (!resolved.ok) return { ok: false, output: `refused: ${resolved.reason}` };
    const existing = await stat(resolved.abs).catch(() => undefined);
    // Writing to a FIFO would block until a reader appears; to a device, worse.
    if (existing && !existing.isFile()) {
      return { ok: false, output: `${resolved.rel} exists and is not a regular file` };
    }
    // resolveWritable checked the real path of every existing ancestor, so the new ones land inside.
    await mkdir(path.dirname(resolved.abs), { recursive: true });
    await writeFile(resolved.abs, args.content, 'utf8');
    const bytes = Buffer.byteLength(args.content, 'utf8');
    return { ok: true, output: `${existing ? 'overwrote' : 'created'} ${resolved.rel} (${bytes} bytes)` };
  },
});
