#!/usr/bin/env node
/**
 * Entry point. CommonJS on purpose: `--version` is answered here before anything else is
 * loaded, because scripts call it in loops and it must cost little more than starting node
 * itself (SPEC §12) — and Node 20 loads a CommonJS file measurably faster than an ES module.
 * Everything else loads the CLI (an ES module bundle beside this file, see scripts/build.js).
 */
import fs = require('node:fs');
import path = require('node:path');

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
  process.stdout.write(`${pkg.version}\n`);
} else {
  // The CLI is a bundle (scripts/build.js): with NAVI_DEBUG, stack traces name src/ files and lines.
  if (process.env.NAVI_DEBUG) process.setSourceMapsEnabled(true);
  import('./app.js').then(
    ({ main }) => main(args),
    (err: unknown) => {
      process.stderr.write(`navi: cannot load the CLI: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
