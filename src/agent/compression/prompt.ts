/**
 * The summariser prompt lives in a file (`prompts/compression/summary.md`, or a profile's
 * `compression_prompt_file`), never in a code string, so it can be tuned without a release.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { NaviError } from '../../errors.js';

/** The shipped prompt; resolves from both `src/` (tests) and `dist/` (the built CLI). */
export const DEFAULT_PROMPT_FILE = fileURLToPath(new URL('../../../prompts/compression/summary.md', import.meta.url));

/** Reads a summariser prompt; a missing or unreadable file is an error naming it. */
export async function loadCompressionPrompt(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : String(err);
    throw new NaviError('error', 'compression_prompt_unreadable', `compression prompt ${file} cannot be read (${code}); check compression_prompt_file in the profile's config.json`, {
      cause: err,
    });
  }
}

/** The prompt with `{{max_tokens}}` filled in. */
export function renderCompressionPrompt(template: string, maxTokens: number): string {
  return template.replaceAll('{{max_tokens}}', String(maxTokens));
}
