/**
 * The runtime of a loop run: the same parts as `createRuntime` (config, profiles, tools, store,
 * agent), with two differences a one-shot run must not have — the configuration includes the
 * loop overrides (the task's `loop:` block and the `navi loop` flags, so the safety guard sees
 * them), and the tool registry includes `loop_signal`.
 */
import type { LoopOverride } from '../config/load.js';
import type { Store } from '../store/types.js';
import type { GlobalArgs } from './global-args.js';
import type { CliHost } from './host.js';
import type { Output } from './output.js';
import { createRuntime, isInteractive, type Runtime } from './runtime.js';
import { configFor, type LoadedRunConfig } from './setup.js';

/** A loaded configuration and what the loader had to say. */
export type LoadedLoopConfig = LoadedRunConfig;

export { isInteractive };

/** The configuration a loop runs with (flags > env > loop overrides > files > defaults). */
export function loadLoopConfig(args: GlobalArgs, cwd: string, env: Record<string, string | undefined>, loopOverrides: readonly LoopOverride[]): LoadedLoopConfig {
  return configFor(args, cwd, env, loopOverrides);
}

/** What createLoopRuntime needs beyond the global flags. */
export interface LoopRuntimeOptions {
  /** Working directory of the run (a task's `cwd`, a resumed run's stored one, else `--cwd`). */
  cwd: string;
  loopOverrides: readonly LoopOverride[];
  /** An already open store (a resume reads its run before the runtime exists). */
  store?: Promise<Store>;
  /** The configuration, when the caller already loaded it (to check it before opening anything). */
  loaded?: LoadedLoopConfig;
  /** false: nobody answers prompts on this terminal (`navi serve`). */
  interactive?: boolean;
}

/** Everything a loop run needs: createRuntime with the loop's configuration and `loop_signal`. */
export async function createLoopRuntime(args: GlobalArgs, host: CliHost, output: Output, opts: LoopRuntimeOptions): Promise<Runtime> {
  const { config, explicit, warnings } = opts.loaded ?? loadLoopConfig(args, opts.cwd, host.env, opts.loopOverrides);
  if (!args.quiet) for (const w of warnings) output.diagnostic(`warning: ${w}`);
  return createRuntime(args, host, output, {
    base: { host, cwd: opts.cwd, config, explicit, output },
    loopTools: true,
    ...(opts.store ? { store: opts.store } : {}),
    ...(opts.interactive === false ? { interactive: false } : {}),
  });
}
