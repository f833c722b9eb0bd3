#!/usr/bin/env node
/**
 * Entry point. CommonJS on purpose: `--version` is answered here before anything else is
 * loaded, because scripts call it in loops and it must cost little more than starting node
 * itself (SPEC §12) — and Node 20 loads a CommonJS file measurably faster than an ES module.
 * Everything else loads the CLI (an ES module bundle beside this file, see scripts/build.js).
 */
import fs = require('node:fs');
import path = require('node:path');
import v8 = require('node:v8');

/** When the young generation stops growing: after start-up, early in a long run. */
const YOUNG_GENERATION_FREEZE_MS = 500;

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
  process.stdout.write(`${pkg.version}\n`);
} else {
  // The CLI is a bundle (scripts/build.js): with NAVI_DEBUG, stack traces name src/ files and lines.
  if (process.env.NAVI_DEBUG) process.setSourceMapsEnabled(true);
  // Start-up (module loading, opening PGlite) allocates fast and is quicker with room to do so.
  setTimeout(keepYoungGenerationSmall, YOUNG_GENERATION_FREEZE_MS).unref();
  import('./app.js').then(
    ({ main }) => main(args),
    (err: unknown) => {
      process.stderr.write(`navi: cannot load the CLI: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}

/**
 * Memory of long unattended runs (SPEC §12: RSS growth over a 1000-iteration loop ≤ 50 MB).
 * Under a steady allocation rate, which a tool loop against a fast model has, V8 keeps doubling
 * its young generation up to 16 MB per semi-space, and the process keeps the pages. Frozen at the
 * size start-up left it, a 1000-iteration loop grows RSS by about a third less and runs no
 * slower (`npm run bench -- --only growth,gap`; README "Performance"). The flag is read whenever
 * the young generation would grow, so setting it at run time takes effect. Only on the V8
 * versions known to have it (an unknown flag prints an error).
 */
function keepYoungGenerationSmall(): void {
  const major = Number(process.versions.v8.split('.')[0]);
  if (major >= 11 && major <= 13) v8.setFlagsFromString('--semi-space-growth-factor=1');
}
