/**
 * What main.cjs loads first (built to `dist/cli/run-entry.cjs`, one minified CommonJS bundle with
 * a V8 code cache: scripts/build.js, main.cts). A plain `navi run` or `navi "prompt"` — the
 * command scripts call in loops — is answered from here with only the run path loaded; anything
 * else (other commands, `--help`, a flag the fast path leaves to yargs) goes to the full CLI
 * (app.ts), which the caller loads from the split ES module build, where every command stays a
 * lazy chunk. Nothing is set up before that hand-over, so the full CLI starts as if alone.
 */
import { reportFatal } from './fatal.js';
import { parseRunFast } from './fast-run.js';
import type { GlobalArgs } from './global-args.js';
import { runCommand } from './commands/dispatch.js';
import { processHost, type CliHost } from './host.js';
import { exitQuietlyOnBrokenPipe, finish } from './process-exit.js';
import { expandShorthand } from './shorthand.js';

export interface FullCli {
  /** The bin's way into the full CLI (app.ts): this process is the host, and it exits with the code. */
  binMain(args: string[]): Promise<never>;
}

export async function main(args: string[], loadFullCli: () => Promise<FullCli>): Promise<void> {
  const fast = runFastArgs(args);
  if (fast === null) return (await loadFullCli()).binMain(args);
  exitQuietlyOnBrokenPipe(process.stdout);
  exitQuietlyOnBrokenPipe(process.stderr);
  return finish(await runFast(fast, processHost()));
}

/** The parsed flags of a plain `navi run`, or null: the full CLI parses (and reports errors). */
function runFastArgs(args: string[]): (GlobalArgs & Record<string, unknown>) | null {
  try {
    return parseRunFast(expandShorthand(args));
  } catch {
    return null;
  }
}

/** Runs `navi run` parsed by the fast path in `host`; its exit code. */
export async function runFast(argv: GlobalArgs & Record<string, unknown>, host: CliHost): Promise<number> {
  // The embedded database (no --db, no DATABASE_URL) starts loading on another core now.
  if (host.ownsProcess && argv.db === undefined && !host.env.DATABASE_URL) void import('../store/open.js').then((m) => m.prewarmEmbeddedStore());
  try {
    return await runCommand(argv, host);
  } catch (err) {
    return reportFatal(err, host);
  }
}
