import { writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import { MAX_EDIT_BYTES, looksBinary, openRegularFile } from './text-file.js';

/** Start indexes of the non-overlapping occurrences of `needle`. */
function occurrences(haystack: string, needle: string): number[] {
  const found: number[] = [];
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) {
    found.push(i);
  }
  return found;
}

/** `edit_file {path, old_string, new_string}`: replaces the one occurrence of old_string. */
export const editFileTool = defineTool({
  name: 'edit_file',
  description: 'Replace old_string, which must occur exactly once in the file, with new_string.',
  schema: z.object({ path: z.string(), old_string: z.string(), new_string: z.string() }),
  async execute(args, ctx) {
    if (args.old_string === '') return { ok: false, output: 'old_string is empty; use write_file to create a file' };
    if (args.old_string === args.new_string) return { ok: false, output: 'old_string and new_string are identical' };
    const opened = await openRegularFile(ctx.cwd, args.path, { forEdit: true, ...(ctx.shell.sandbox ? { sandbox: ctx.shell.sandbox } : {}) });
    if (!opened.ok) return opened;
    const { handle, abs, rel, size } = opened;
    let content: string;
    try {
      if (size > MAX_EDIT_BYTES) return { ok: false, output: `${rel} is ${size} bytes; too large to edit` };
      if (await looksBinary(handle, size)) return { ok: false, output: `${rel}: binary file, ${size} bytes` };
      content = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
    let oldString = args.old_string;
    let newString = args.new_string;
    let found = occurrences(content, oldString);
    // read_file shows CRLF files with plain newlines; match what the model copied from there.
    if (found.length === 0 && content.includes('\r\n') && oldString.includes('\n') && !oldString.includes('\r')) {
      oldString = oldString.replace(/\n/g, '\r\n');
      newString = newString.replace(/\r?\n/g, '\r\n');
      found = occurrences(content, oldString);
    }
    const [at] = found;
    if (at === undefined) {
      return { ok: false, output: `old_string not found in ${rel} (0 matches); read the file and copy the exact text` };
    }
    if (found.length > 1) {
      return {
        ok: false,
        output: `old_string matches ${found.length} times in ${rel}; include more surrounding lines to make it unique`,
      };
    }
    const updated = content.slice(0, at) + newString + content.slice(at + oldString.length);
    await writeFile(abs, updated, 'utf8');
    const line = content.slice(0, at).split('\n').length;
    return { ok: true, output: `edited ${rel} at line ${line}` };
  },
});
