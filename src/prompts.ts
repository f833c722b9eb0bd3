/**
 * Prompt files. Prompts live in `prompts/` at the package root (not in code strings) so they
 * can be read, diffed and tuned on their own. Loaded once per process and cached: their
 * bytes must not change within a run (prefix stability, SPEC §8).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PACKAGE_ROOT_URL } from './package-root.js';

/** `prompts/` at the package root. */
const PROMPTS_DIR = new URL('prompts/', PACKAGE_ROOT_URL);

const cache = new Map<string, string>();

/** The text of `prompts/<relPath>`, trailing whitespace trimmed. */
export function loadPrompt(relPath: string): string {
  let text = cache.get(relPath);
  if (text === undefined) {
    text = readFileSync(fileURLToPath(new URL(relPath, PROMPTS_DIR)), 'utf8').replace(/\r\n/g, '\n').trimEnd();
    cache.set(relPath, text);
  }
  return text;
}

/** Replaces `{{name}}` placeholders; unknown placeholders are left as they are. */
export function fillPrompt(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{\{([a-z_][a-z0-9_]*)\}\}/gi, (whole, name: string) =>
    Object.prototype.hasOwnProperty.call(values, name) ? String(values[name]) : whole,
  );
}
