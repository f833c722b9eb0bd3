/**
 * What most commands need before they start: the working directory, the layered config,
 * the output renderer and (lazily) the profiles and the database.
 */
import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import type { NaviConfig } from '../config/schema.js';
import { loadConfig, type LoopOverride } from '../config/load.js';
import { projectFilesIgnored } from '../config/project-files.js';
import { configFlags, listFlag, type AgentFlagArgs } from './agent-flags.js';
import { InvalidInputError } from '../errors.js';
import type { ProfileSet } from '../profiles/types.js';
import type { Sandbox } from '../sandbox/modes.js';
import type { Store } from '../store/types.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { ToolDefinition } from '../tools/types.js';
import type { GlobalArgs } from './global-args.js';
import type { CliHost } from './host.js';
import { Output } from './output.js';
import { jsonLine } from './terminal-text.js';

export interface CliSetup {
  /** The process, or a test's stand-in for it: environment, streams. */
  host: CliHost;
  cwd: string;
  config: NaviConfig;
  /** Dotted config keys some layer set explicitly (e.g. `llm.num_ctx`). */
  explicit: ReadonlySet<string>;
  output: Output;
}

/** `--cwd DIR` against the invocation's own directory (`from`), checked to be a directory. */
export function resolveCwd(dir: string | undefined, from: string): string {
  const cwd = resolve(from, dir ?? '.');
  let isDir: boolean;
  try {
    isDir = statSync(cwd).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) throw new InvalidInputError('cwd_invalid', `--cwd ${dir ?? cwd}: not a directory`);
  return cwd;
}

/** Output renderer for this invocation (available before config is loaded). */
export function createOutput(argv: GlobalArgs, host: CliHost): Output {
  const { env, stdout, stderr } = host;
  const color = argv.color && !('NO_COLOR' in env) && stderr.isTTY === true;
  return new Output({ mode: argv.output, quiet: argv.quiet, color, stdout, stderr, env });
}

/** A loaded configuration and what the loader had to say. */
export interface LoadedRunConfig {
  config: NaviConfig;
  explicit: ReadonlySet<string>;
  warnings: string[];
}

/**
 * The one reading of the configuration from the command line: files, environment, the flags
 * that set keys (`--model`, `--think`, `--num-ctx`, …), `--mcp-config` files and, for a loop,
 * its overrides (flags > env > loop overrides > files > defaults).
 */
export function configFor(args: GlobalArgs & AgentFlagArgs, cwd: string, env: Record<string, string | undefined>, loopOverrides: readonly LoopOverride[] = []): LoadedRunConfig {
  const loaded = loadConfig({
    cwd,
    configFile: args.config,
    env,
    home: env.HOME || homedir(),
    flags: configFlags(args),
    mcpConfigFiles: listFlag(args.mcpConfig),
    loopOverrides,
  });
  return { config: loaded.config, explicit: loaded.explicit.keys, warnings: loaded.warnings };
}

export function setup(argv: GlobalArgs, host: CliHost, output: Output = createOutput(argv, host)): CliSetup {
  const cwd = resolveCwd(argv.cwd, host.cwd);
  const loaded = configFor(argv, cwd, host.env);
  if (!argv.quiet) for (const w of loaded.warnings) output.diagnostic(`warning: ${w}`);
  return { host, cwd, config: loaded.config, explicit: loaded.explicit, output };
}

/** Shipped profiles plus the project's `profiles/` folder (not a repository's the worker does not trust). */
export async function profilesFor(cwd: string, env: Record<string, string | undefined>): Promise<ProfileSet> {
  const { loadProfiles, shippedProfilesDir } = await import('../profiles/load.js');
  if (projectFilesIgnored(env)) return loadProfiles({ shippedDir: shippedProfilesDir() });
  return loadProfiles({ shippedDir: shippedProfilesDir(), projectDir: resolve(cwd, 'profiles') });
}

/**
 * The tool registry of a run: built-ins, agent-level tools and the project's user tools, plus
 * `loop_signal` for loop runs (`withLoopTools`) and the MCP servers' tools (`mcpTools`). With a
 * `sandbox` (`--sandbox`, config `sandbox`), the user tool modules are loaded inside it: their
 * top-level code never runs in navi's process (issue 35).
 */
export async function toolsFor(
  cwd: string,
  env: Record<string, string | undefined>,
  config: NaviConfig,
  withLoopTools = false,
  mcpTools: Promise<readonly ToolDefinition[] | undefined> | readonly ToolDefinition[] = [],
  sandbox: Sandbox | null = null,
): Promise<{ registry: ToolRegistry; userTools: string[] }> {
  const [{ builtinTools }, { agentTools }, loop, { ToolRegistry: Registry }] = await Promise.all([
    import('../tools/builtin/index.js'),
    import('../agent/agent-tools.js'),
    withLoopTools ? import('../loop/loop-signal-tool.js') : null,
    import('../tools/registry.js'),
  ]);
  const builtins = [...builtinTools(), ...agentTools(), ...(loop ? loop.loopTools() : [])];
  const [{ loadUserTools }, { userToolDirs }] = await Promise.all([import('../tools/user-tools.js'), import('../tools/user-tool-files.js')]);
  // `./tools/` is the only optional folder: the project's own, skipped for an untrusted repository
  // (the operator's `tools.paths` stay).
  const ignoreProject = projectFilesIgnored(env);
  const user = await loadUserTools({
    dirs: userToolDirs(cwd, config.tools.paths ?? []).filter((d) => !(ignoreProject && d.optional)),
    builtinNames: new Set([...builtins.map((t) => t.name), 'loop_signal']),
    cwd,
    ...(sandbox !== null ? { sandbox } : {}),
  });
  // Awaited last: built-ins and user tools load while the MCP servers start.
  return { registry: new Registry([...builtins, ...user, ...((await mcpTools) ?? [])]), userTools: user.map((t) => t.name) };
}

/**
 * The sandbox the configuration asks for, ready (null when it is off): the one place a command
 * prepares it — the agent commands (runtime.ts) and those that load the project's tools without
 * running the model (doctor, `profiles show`), so tool modules load inside the same sandbox a run
 * would use. Imported only when one is asked for: the start-up path of a plain run stays as it
 * was. `sandbox_unavailable` (exit 2) when it cannot be set up.
 */
export async function configuredSandbox(config: NaviConfig, cwd: string, env: Record<string, string | undefined>): Promise<Sandbox | null> {
  if (config.sandbox.mode === 'off') return null;
  const { prepareSandbox } = await import('../sandbox/prepare.js');
  return prepareSandbox(config.sandbox, { cwd, env, dataDir: config.db.data_dir, visible: config.tools.paths });
}

/**
 * Opens the configured database (PGlite by default), migrating it on first use. `say` writes a
 * notice for a person (the run's Output, which clears the spinner line first); else stderr.
 */
export async function openConfiguredStore(config: NaviConfig, host: Pick<CliHost, 'env' | 'stderr'>, say?: (message: string) => void): Promise<Store> {
  const { env, stderr } = host;
  const { openStore, defaultDataDir } = await import('../store/open.js');
  // A first run creates the embedded database (~0.5 s from the shipped template): said on a
  // terminal, so the pause has a reason; scripts (no TTY) read nothing extra.
  const notice = stderr.isTTY === true ? (message: string): void => (say ? say(`navi: ${message}`) : void stderr.write(`navi: ${message}\n`)) : undefined;
  // NAVI_PGLITE_DRIVER=main-thread: the plain PGlite driver, to check the fast one against it (README, Development).
  const plain = env.NAVI_PGLITE_DRIVER === 'main-thread';
  return openStore({
    url: config.db.url,
    dataDir: config.db.data_dir ?? defaultDataDir(env),
    ...(notice ? { notice } : {}),
    ...(plain ? { pgliteDriver: 'main-thread' as const } : {}),
  });
}

/**
 * For the commands that only read or change stored data: opens the configured store, runs
 * `fn` (told whether the output is JSON), and always closes the store.
 */
export async function withStore<T>(argv: GlobalArgs, host: CliHost, fn: (store: Store, json: boolean, ctx: CliSetup) => Promise<T>): Promise<T> {
  const ctx = setup(argv, host);
  const store = await openConfiguredStore(ctx.config, host);
  try {
    return await fn(store, argv.output !== 'text', ctx);
  } finally {
    await store.close();
  }
}

/** One JSON value on stdout, one line (stored model text inside: C1 controls escaped too). */
export function printJson(stdout: CliHost['stdout'], value: unknown): void {
  stdout.write(`${jsonLine(value)}\n`);
}
