/** Helpers for the user-tools tests: Node's own `import()`, fixture paths, temp tool directories. */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { builtinTools } from '../../src/tools/builtin/index.js';
import type { LoadUserToolsOptions } from '../../src/tools/user-tools.js';

/**
 * Node's native `import()`. vitest rewrites every `import()` in test and source files into its
 * own loader, whose errors and CommonJS handling differ from Node's; user tools are loaded by
 * Node in production, so the loader is tested with Node's.
 */
export const nativeImport = vm.runInThisContext('(url) => import(url)', {
  importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
}) as (url: string) => Promise<unknown>;

export const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');

/** The registry's built-in names plus the agent-level ones the CLI adds. */
export const BUILTIN_NAMES: ReadonlySet<string> = new Set([
  ...builtinTools().map((tool) => tool.name),
  'plan',
  'spawn_agent',
  'switch_profile',
]);

/** Options for `loadUserTools` over `dirs` with the native importer. */
export function loadOptions(dirs: LoadUserToolsOptions['dirs'], extra: Partial<LoadUserToolsOptions> = {}): LoadUserToolsOptions {
  return { dirs, builtinNames: BUILTIN_NAMES, importModule: nativeImport, ...extra };
}

/** Writes `files` (name → source) into `dir`, creating it. */
export async function writeFiles(dir: string, files: Record<string, string>): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const [name, source] of Object.entries(files)) await writeFile(path.join(dir, name), source);
}

/** A minimal valid tool module's source. */
export function toolSource(name: string, output = 'ok'): string {
  return [
    `export const name = ${JSON.stringify(name)};`,
    `export const description = 'Generated tool ${name}.';`,
    `export const parameters = { type: 'object', properties: {} };`,
    `export const execute = () => ${JSON.stringify(output)};`,
    '',
  ].join('\n');
}
