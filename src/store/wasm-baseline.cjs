// @ts-check
/**
 * PGlite's 9 MB of WebAssembly runs on V8's baseline compiler (Liftoff) only: opening a data
 * directory is ~3× faster than letting TurboFan optimise PostgreSQL's functions in the background,
 * and a process that exits leaves no optimising compilation to wait for.
 *
 * Three flags, not one. V8 applies a flag's implications once, when it starts: `--liftoff-only`
 * on the command line also turns off `--wasm-tier-up` and `--wasm-dynamic-tiering`
 * (flag-definitions.h: `DEFINE_NEG_IMPLICATION(liftoff_only, wasm_tier_up)` and `…,
 * wasm_dynamic_tiering)`), but set at run time (`v8.setFlagsFromString`) it sets itself alone.
 * V8 11 (Node 20) read `liftoff_only` where it tiered up, so the one flag was enough; V8 12.4
 * (Node 22) and 13.6 (Node 24) read the two tiering flags, so with `--liftoff-only` alone every hot
 * PostgreSQL function went to TurboFan — and at exit Node waited for those compilations: a
 * one-shot run on PGlite took 2.5–3.8 s and 670–780 MB on Node 24 instead of 0.9 s and 140 MB
 * (issue 40). Plain CommonJS, required by the bin (src/cli/main.cts) and the PGlite worker thread
 * (pglite-worker-thread.cjs); copied to dist/store/ by scripts/build.js.
 *
 * V8 flags are per process: set in the same order everywhere, before anything is compiled in the
 * bin, so a V8 code cache made by one run is accepted by the next (V8 checks the flags' hash).
 */
'use strict';

/** The flags, in the order they are set. */
const WASM_BASELINE_FLAGS = Object.freeze(['--liftoff-only', '--no-wasm-tier-up', '--no-wasm-dynamic-tiering']);

/** Sets them for this process (every thread): idempotent. */
function useBaselineWasmCompiler() {
  const v8 = require('node:v8');
  for (const flag of WASM_BASELINE_FLAGS) v8.setFlagsFromString(flag);
}

module.exports = { WASM_BASELINE_FLAGS, useBaselineWasmCompiler };
