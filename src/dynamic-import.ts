/**
 * `import()` for code that may run inside the run entry (dist/cli/run-entry.cjs). main.cjs
 * compiles that bundle with a V8 code cache (src/cli/main.cts), and on Node 20 a script compiled
 * from cached data has lost what Node needs to find a module loader: every `import()` in it
 * fails with "A dynamic import callback was not specified" (a user tool, an https Ollama URL),
 * and without the cache Node warns that the loader it falls back to is experimental. So main.cjs,
 * which Node loaded itself, lends its own `import()` under `IMPORT_KEY`; elsewhere (the ES module
 * build, tests) this module's own is used.
 */

/** Where main.cjs puts its `import()` (src/cli/main.cts sets it before loading the run entry). */
const IMPORT_KEY = '__naviImport';

type Importer = (specifier: string) => Promise<unknown>;

/** `import(specifier)`: a file URL, a `node:` module or a package name. */
export function importModule(specifier: string): Promise<unknown> {
  const lent = (globalThis as Record<string, unknown>)[IMPORT_KEY];
  return typeof lent === 'function' ? (lent as Importer)(specifier) : import(specifier);
}
