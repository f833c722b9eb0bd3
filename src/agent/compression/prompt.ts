/**
 * The summariser prompt lives in a file (`prompts/compression/summary.md`, or a profile's
 * `compression_prompt_file`), never in a code string, so it can be tuned without a release.
 */
import { fileURLToPath } from 'node:url';
import { MAX_PROMPT_FILE_BYTES, readUserFile, UserFileError } from '../../config/read-user-file.js';
import { NaviError } from '../../errors.js';

/** The shipped prompt; resolves from both `src/` (tests) and `dist/` (the built CLI). */
export const DEFAULT_PROMPT_FILE = fileURLToPath(new URL('../../../prompts/compression/summary.md', import.meta.url));

/**
 * Reads a summariser prompt; a missing or unreadable file is an error naming it. A profile
 * folder may come from a cloned repository: only a regular file of prompt size is read (a
 * FIFO would hang the run, a symlink to /dev/zero would fill memory).
 */
export function loadCompressionPrompt(file: string): Promise<string> {
  try {
    return Promise.resolve(readUserFile(file, { display: file, code: 'compression_prompt_unreadable', maxBytes: MAX_PROMPT_FILE_BYTES, kind: 'prompt files' }));
  } catch (err) {
    const why = err instanceof UserFileError ? (err.fsCode ?? err.reason) : String(err);
    return Promise.reject(
      new NaviError('error', 'compression_prompt_unreadable', `compression prompt ${file} cannot be read (${why}); check compression_prompt_file in the profile's config.json`, {
        cause: err,
      }),
    );
  }
}

/** The prompt with `{{max_tokens}}` filled in. */
export function renderCompressionPrompt(template: string, maxTokens: number): string {
  return template.replaceAll('{{max_tokens}}', String(maxTokens));
}
