/**
 * The runtime of a loop run: the same parts as `createRuntime` (config, profiles, tools, store,
 * agent), with two differences a one-shot run must not have — the configuration includes the
 * loop overrides (the task's `loop:` block and the `navi loop` flags, so the safety guard sees
 * them), and the tool registry includes `loop_signal`.
 */
import { homedir } from 'node:os';
import { Agent } from '../agent/agent.js';
import { loadConfig, type LoopOverride } from '../config/load.js';
import type { NaviConfig } from '../config/schema.js';
import { createOllamaClient } from '../llm/ollama-client.js';
import type { Store } from '../store/types.js';
import type { ToolRegistry } from '../tools/registry.js';
import { askYesNo } from './ask.js';
import type { GlobalArgs } from './global-args.js';
import type { Output } from './output.js';
import { userName, type Runtime } from './runtime.js';
import { openConfiguredStore, profilesFor } from './setup.js';

/** A loaded configuration and what the loader had to say. */
export interface LoadedLoopConfig {
  config: NaviConfig;
  explicit: ReadonlySet<string>;
  warnings: string[];
}

/** True when a person can answer prompts: stdin and stderr are terminals and CI is unset. */
export function isInteractive(env: Record<string, string | undefined>): boolean {
  return process.stdin.isTTY === true && process.stderr.isTTY === true && !('CI' in env);
}

/** The configuration a loop runs with (flags > env > loop overrides > files > defaults). */
export function loadLoopConfig(args: GlobalArgs, cwd: string, loopOverrides: readonly LoopOverride[]): LoadedLoopConfig {
  const loaded = loadConfig({
    cwd,
    configFile: args.config,
    env: process.env,
    home: homedir(),
    flags: { ollamaHost: args.ollamaHost, model: args.model, db: args.db, profile: args.profile },
    loopOverrides,
  });
  return { config: loaded.config, explicit: loaded.explicit.keys, warnings: loaded.warnings };
}

/** Built-ins, agent-level tools, `loop_signal` and the project's user tools. */
async function loopToolsFor(cwd: string, config: NaviConfig): Promise<{ registry: ToolRegistry; userTools: string[] }> {
  const [{ builtinTools }, { agentTools }, { loopTools }, { ToolRegistry: Registry }, { loadUserTools, userToolDirs }] = await Promise.all([
    import('../tools/builtin/index.js'),
    import('../agent/agent-tools.js'),
    import('../loop/loop-signal-tool.js'),
    import('../tools/registry.js'),
    import('../tools/user-tools.js'),
  ]);
  const builtins = [...builtinTools(), ...agentTools(), ...loopTools()];
  const user = await loadUserTools({ dirs: userToolDirs(cwd, config.tools.paths ?? []), builtinNames: new Set(builtins.map((t) => t.name)), cwd });
  return { registry: new Registry([...builtins, ...user]), userTools: user.map((t) => t.name) };
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
}

/** Everything a loop run needs, like createRuntime but with the loop's config and tools. */
export async function createLoopRuntime(args: GlobalArgs, output: Output, opts: LoopRuntimeOptions): Promise<Runtime> {
  const env = process.env;
  const { config, explicit, warnings } = opts.loaded ?? loadLoopConfig(args, opts.cwd, opts.loopOverrides);
  if (!args.quiet) for (const w of warnings) output.diagnostic(`warning: ${w}`);
  const [profiles, tools] = await Promise.all([profilesFor(opts.cwd), loopToolsFor(opts.cwd, config)]);
  const store = opts.store ?? openConfiguredStore(config, env);
  store.catch(() => undefined);
  const interactive = isInteractive(env);
  const agent = new Agent({
    llm: createOllamaClient({ host: config.llm.host, firstChunkTimeoutS: config.llm.first_chunk_timeout_s, chunkTimeoutS: config.llm.chunk_timeout_s }),
    store,
    tools: tools.registry,
    profiles,
    userTools: tools.userTools,
    user: userName(env),
    messageTokenBudget: config.context_message_token_budget,
    ...(interactive
      ? {
          confirmPlan: async (plan: string): Promise<boolean> => {
            output.diagnostic(`\n${plan}\n`);
            return askYesNo('Proceed with this plan? [Y/n] ');
          },
        }
      : {}),
  });
  return { cwd: opts.cwd, env, config, explicit, output, profiles, registry: tools.registry, userTools: tools.userTools, store, agent, interactive };
}
