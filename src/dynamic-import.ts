/**
 * `import()` for code that may run inside the run entry (dist/cli/run-entry.cjs). main.cjs
 * compiles that bundle from a `vm.Script` with its own V8 code cache (src/cli/main.cts), on every
 * Node version, and a script compiled that way cannot use its own `import()` cleanly (checked
 * 2026-12-07 with a user tool and an https Ollama URL): on Node 20 every `import()` in it fails
 * with "A dynamic import callback was not specified" once it comes from cached data, and without
 * the cache Node warns that the loader it falls back to (`vm.USE_MAIN_CONTEXT_DEFAULT_LOADER`) is
 * experimental; on Node 22 and 24 it works from cached data too, but prints that warning on every
 * run. So main.cjs, which Node loaded itself, lends its own `import()` under `IMPORT_KEY`;
 * elsewhere (the ES module build, tests) this module's own is used. Needed as long as the run
 * entry is a `vm.Script` — Node's compile cache with a plain `require` would not need it, but
 * loads the run path slower (main.cts).
 */

/** Where main.cjs puts its `import()` (src/cli/main.cts sets it before loading the run entry). */
const IMPORT_KEY = '__naviImport';

type Importer = (specifier: string) => Promise<unknown>;

/** `import(specifier)`: a file URL, a `node:` module or a package name. */
export function importModule(specifier: string): Promise<unknown> {
  const lent = (globalThis as Record<string, unknown>)[IMPORT_KEY];
  return typeof lent === 'function' ? (lent as Importer)(specifier) : import(specifier);
}
