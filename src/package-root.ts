/**
 * navi's package root: the directory holding package.json, prompts/, profiles/, drizzle/,
 * tasks/ and templates/. Everything navi ships beside its code is found from here.
 *
 * This file sits one level below the root (`src/package-root.ts`), so `..` of its URL is the
 * root under tsx and vitest. The bundle (scripts/build.js) keeps that true: there every
 * module's `import.meta.url` names where its source sits in the package (`<root>/src/…`),
 * computed from the bundle file's own location, so the same relative URL lands on the same
 * directory.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root as a directory URL (trailing slash). */
export const PACKAGE_ROOT_URL = new URL('..', import.meta.url);

/** The absolute path of `<package root>/<segments…>`. */
export function packagePath(...segments: string[]): string {
  return join(fileURLToPath(PACKAGE_ROOT_URL), ...segments);
}
