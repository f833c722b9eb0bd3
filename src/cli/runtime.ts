/**
 * What the agent commands (`run`, `sessions compact`, and loop mode) build before they start:
 * config, profiles, tools, the store (opening in the background), the agent, and the turn
 * options every turn shares. Also the shared failure path: any error becomes one `error`
 * event, a `result` and the SPEC §4 exit code.
 */
import { Agent, unknownProfileTools, type TurnOptions } from '../agent/agent.js';
import { failureOf, failureResult } from '../agent/result-event.js';
import { EXIT, InvalidInputError, isNaviError } from '../errors.js';
import type { NaviConfig } from '../config/schema.js';
import { outageRetryMs } from '../config/outage-retry.js';
import { createOllamaClient } from '../llm/ollama-client.js';
import type { LlmClientOptions } from '../llm/types.js';
import { normalizePrompt } from '../profiles/load.js';
import { findProjectInstructions, type ProjectInstructions } from '../profiles/project-instructions.js';
import type { Profile, ProfileSet } from '../profiles/types.js';
import type { Store } from '../store/types.js';
import type { ToolRegistry } from '../tools/registry.js';
import { createRedactor } from '../tools/redact.js';
import type { McpManager } from '../mcp/mcp-manager.js';
import type { Sandbox } from '../sandbox/modes.js';
import type { AgentFlagArgs } from './agent-flags.js';
import { systemPromptFlag } from './agent-flags.js';
import { askYesNo } from './ask.js';
import { checkProfileMcp, hasMcpServers, mcpSecretEnv, startMcp } from './mcp-runtime.js';
import { memoryCacheFor } from './memory-cache.js';
import type { GlobalArgs } from './global-args.js';
import type { CliHost } from './host.js';
import { modelExchanges, type ModelExchanges } from './model-exchanges.js';
import type { Output } from './output.js';
import { configuredSandbox, openConfiguredStore, profilesFor, resolveCwd, setup, toolsFor, type CliSetup } from './setup.js';

export interface Runtime extends CliSetup {
  profiles: ProfileSet;
  registry: ToolRegistry;
  userTools: string[];
  /** The MCP servers of this run (null when none is configured); closed by the command. */
  mcp: McpManager | null;
  store: Promise<Store>;
  agent: Agent;
  interactive: boolean;
  /** `--record` / `--replay`: call `finish()` when the work is done, before the result. */
  exchanges: ModelExchanges;
  /** AGENTS.md & co. found for the working directory (none with `--no-project-instructions`). */
  instructions: ProjectInstructions | null;
  /** What goes after the profile's prompt in the system message (instructions, --append-system-prompt). */
  systemAppendix: string;
  /** `--system-prompt TEXT`: replaces the prompt of the profile this run uses (resolveProfile). */
  systemPrompt: string | undefined;
  /** `--sandbox` / config `sandbox`: where the shell tool's commands run (null: off). */
  sandbox: Sandbox | null;
}

/** Project instructions then `--append-system-prompt`: the run's part of the system message. */
export function systemAppendix(instructions: ProjectInstructions | null, appended: string | undefined): string {
  return [instructions?.text ?? '', appended?.trim() ?? ''].filter((part) => part.length > 0).join('\n\n');
}

/** Whose long-term memories apply: the OS user (memories are per user, SPEC §9). */
export function userName(env: Record<string, string | undefined>): string {
  return env.USER ?? env.LOGNAME ?? 'local';
}

/** What a loop run adds (see loop-runtime.ts); a one-shot run passes nothing. */
export interface RuntimeOptions {
  /** The configuration, already loaded (a loop loads it with its overrides before anything opens). */
  base?: CliSetup;
  /** Offer `loop_signal`. */
  loopTools?: boolean;
  /** An already open store (a resume reads its run before the runtime exists). */
  store?: Promise<Store>;
  /** Start the configured MCP servers (default true; compaction calls no tools). */
  mcp?: boolean;
  /** false: nobody answers prompts on this terminal, whatever it is (`navi serve`: answers come from the API). */
  interactive?: boolean;
}

/** True when a person can answer prompts: stdin and stderr are terminals and CI is unset. */
export function isInteractive(host: Pick<CliHost, 'env' | 'stdin' | 'stderr'>): boolean {
  return host.stdin.isTTY === true && host.stderr.isTTY === true && !('CI' in host.env);
}

export async function createRuntime(args: GlobalArgs, host: CliHost, output: Output, opts: RuntimeOptions = {}): Promise<Runtime> {
  const base = opts.base ?? setup(args, host, output);
  const { cwd, config, host: { env } } = base;
  // Before anything opens: a bad --record/--replay file is exit 2 with nothing to clean up.
  const exchanges = await modelExchanges(args, resolveCwd(args.cwd, host.cwd), env);
  // So is a sandbox that cannot be set up (no bwrap, user namespaces off): never a run without it.
  // Imported only when one is asked for: the start-up path of a plain run stays as it was.
  const sandbox = await configuredSandbox(config, cwd, env);
  // The store opens first: PGlite's file reads and WebAssembly compile then overlap with loading
  // the profiles and tools instead of following them (SPEC §12, one-shot run).
  const store = opts.store ?? openConfiguredStore(config, host, (m) => output.diagnostic(m));
  // Never an unhandled rejection: whoever awaits the store reports a failed open.
  store.catch(() => undefined);
  const llm = createOllamaClient({ ...llmClientOptions(config.llm, base.explicit, env), ...(exchanges.hooks !== undefined && { exchange: exchanges.hooks }) });
  // MCP servers start beside the store, and the model-info call the first turn makes is asked
  // now (the client keeps the answer), so the servers' start hides behind both (SPEC §12).
  const mcp = opts.mcp === false ? Promise.resolve(null) : startMcp(config, cwd, env);
  if (hasMcpServers(config) && opts.mcp !== false) llm.showModel(config.llm.model).catch(() => undefined);
  let profiles: Awaited<ReturnType<typeof profilesFor>>;
  let tools: Awaited<ReturnType<typeof toolsFor>>;
  let servers: McpManager | null;
  try {
    [profiles, tools, servers] = await Promise.all([
      profilesFor(cwd, env),
      toolsFor(cwd, env, config, opts.loopTools, mcp.then((m) => m?.definitions), sandbox),
      mcp,
    ]);
  } catch (err) {
    // A bad profile or tool module (exit 2) must not leave the database open or its lock behind, nor a server running.
    await Promise.all([
      opts.store ? undefined : store.then((s) => s.close()).catch(() => undefined),
      mcp.then((m) => m?.close()).catch(() => undefined),
    ]);
    throw err;
  }
  let instructions: ProjectInstructions | null = null;
  try {
    // Read once: the system message is the same bytes for the whole run (SPEC §8).
    if (args.projectInstructions !== false) instructions = findProjectInstructions(cwd);
  } catch (err) {
    if (!opts.store) await store.then((s) => s.close()).catch(() => undefined);
    throw err;
  }
  const interactive = opts.interactive === false ? false : isInteractive(host);
  const memoryCache = memoryCacheFor(config, env);
  const agent = new Agent({
    llm,
    store,
    tools: tools.registry,
    profiles,
    userTools: tools.userTools,
    mcpTools: servers?.refs ?? [],
    user: userName(env),
    ...(memoryCache ? { memoryCache } : {}),
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
  return {
    ...base,
    profiles,
    registry: tools.registry,
    userTools: tools.userTools,
    mcp: servers,
    store,
    agent,
    interactive,
    instructions,
    systemAppendix: systemAppendix(instructions, args.appendSystemPrompt),
    systemPrompt: systemPromptFlag(args as AgentFlagArgs),
    exchanges,
    sandbox,
  };
}

/**
 * The Ollama client's limits: a silence limit the user set (config or LLM_STREAM_* variable)
 * is enforced as written; a default one only checks that Ollama still answers (SPEC §13).
 * `NAVI_SILENCE_CHECK_S` shortens the default interval (tests).
 */
export function llmClientOptions(
  llm: Pick<NaviConfig['llm'], 'host' | 'first_chunk_timeout_s' | 'chunk_timeout_s' | 'call_timeout_s'>,
  explicit: ReadonlySet<string>,
  env: Record<string, string | undefined>,
): LlmClientOptions {
  const firstChunk = explicit.has('llm.first_chunk_timeout_s');
  const chunk = explicit.has('llm.chunk_timeout_s');
  const check = Number(env.NAVI_SILENCE_CHECK_S);
  const lenient = (seconds: number): number => (Number.isFinite(check) && check > 0 ? check : seconds);
  return {
    host: llm.host,
    firstChunkTimeoutS: firstChunk ? llm.first_chunk_timeout_s : lenient(llm.first_chunk_timeout_s),
    chunkTimeoutS: chunk ? llm.chunk_timeout_s : lenient(llm.chunk_timeout_s),
    strict: { firstChunk, chunk },
    callTimeoutS: llm.call_timeout_s,
    // The plain request bodies, the fast path's oracle (README, Development).
    ...(env.NAVI_PLAIN_BODIES === '1' ? { plainBodies: true } : {}),
  };
}

/** The profile to run, checked: it exists and every tool it lists exists. */
export function resolveProfile(rt: Runtime, id: string): Profile {
  const profile = rt.profiles.profiles.get(id);
  if (!profile) {
    const problem = rt.profiles.broken?.get(id);
    if (problem !== undefined) throw new InvalidInputError('profile_invalid', `profile '${id}' cannot be used: ${problem}`);
    throw new InvalidInputError('profile_not_found', `unknown profile '${id}'; available: ${[...rt.profiles.profiles.keys()].join(', ')}`);
  }
  checkProfileMcp(profile, rt.config);
  const unknown = unknownProfileTools(profile, (n) => rt.registry.has(n));
  if (unknown.length > 0) {
    throw new InvalidInputError(
      'profile_invalid',
      `${profile.dir}/config.json: tools: unknown tool(s) ${unknown.join(', ')}; available: ${rt.registry.names().join(', ')}`,
    );
  }
  if (rt.systemPrompt === undefined) return profile;
  // The agent composes the system message from the set (persona + prompt): the run's profile
  // carries the replacement, every other profile (sub-agents, switch_profile) keeps its own.
  const replaced: Profile = { ...profile, prompt: normalizePrompt(rt.systemPrompt) };
  rt.profiles.profiles.set(id, replaced);
  return replaced;
}

/**
 * Turn options shared by every turn of this invocation. `loop`: a loop run, which waits out a
 * transient Ollama outage by default (`llm.outage_retry`).
 */
export function turnBase(rt: Runtime, signal: AbortSignal, mode: { loop?: boolean } = {}): Omit<TurnOptions, 'sessionId' | 'newSession' | 'message' | 'profileId'> {
  const { config, host: { env } } = rt;
  const heartbeat = Number(env.NAVI_HEARTBEAT_MS);
  const outageRetry = outageRetryMs(config.llm.outage_retry, mode.loop === true);
  return {
    model: config.llm.model,
    cwd: rt.cwd,
    numCtx: config.llm.num_ctx,
    numCtxExplicit: rt.explicit.has('llm.num_ctx'),
    think: config.llm.think,
    thinkExplicit: rt.explicit.has('llm.think'),
    keepAlive: config.llm.keep_alive,
    temperature: config.llm.temperature,
    signal,
    interactive: rt.interactive,
    shell: {
      allow: config.tools.shell.allow,
      deny: config.tools.shell.deny,
      timeoutS: config.tools.shell.timeout_s,
      maxOutputBytes: config.tools.shell.max_output_bytes,
      ...(rt.sandbox !== null ? { sandbox: rt.sandbox } : {}),
      env,
    },
    redact: createRedactor(rt.mcp === null ? env : { ...env, ...mcpSecretEnv(config, env) }),
    ...(rt.systemAppendix.length > 0 ? { systemAppendix: rt.systemAppendix } : {}),
    ...(Number.isFinite(heartbeat) && heartbeat > 0 ? { heartbeatMs: heartbeat } : {}),
    ...(outageRetry > 0 ? { outageRetryMs: outageRetry } : {}),
  };
}

/** Any failure as an `error` event (stream-json), a `result`, and its exit code. */
export async function reportFailure(output: Output, env: Record<string, string | undefined>, err: unknown, ctx: { interrupted: boolean; started: number; sessionId: string; runId?: string }): Promise<number> {
  const failure = failureOf(err, ctx.interrupted);
  if (!isNaviError(err) && env.NAVI_DEBUG && err instanceof Error) output.diagnostic(err.stack ?? '');
  output.setSession(ctx.sessionId, ctx.runId);
  if (output.mode === 'stream-json') output.event({ type: 'error', code: failure.code, message: failure.message });
  await output.result(failureResult(failure, ctx.started));
  return EXIT[failure.status];
}
