#!/usr/bin/env node
/**
 * Entry point. `--version` is answered here, before anything is imported, because scripts
 * call it in loops and it must cost little more than starting node itself (SPEC §12).
 * Everything else loads the CLI lazily.
 */
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  process.stdout.write(`${pkg.version}\n`);
} else {
  const { main } = await import('./app.js');
  await main(args);
}
