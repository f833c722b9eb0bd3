/** The agent core's inputs and outputs (kept apart so turn, agent and sub-agent code share them). */
import type { ChatUsage, LlmClient, ThinkValue } from '../llm/types.js';
import type { McpToolRef } from '../mcp/mcp-tools.js';
import type { ProfileSet } from '../profiles/types.js';
import type { SessionKind, Store } from '../store/types.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { ShellPolicy } from '../tools/types.js';
import type { AgentEvent, StopReason } from './events.js';
import type { MemoryCache } from './memory.js';

export interface AgentDeps {
  llm: LlmClient;
  /** May still be opening: PGlite opens in parallel with the first model call. */
  store: Promise<Store>;
  tools: ToolRegistry;
  profiles: ProfileSet;
  now?: () => number;
  /** Whose long-term memories to use (default `local`). */
  user?: string;
  /** Per-message view truncation budget in tokens; 0 → num_ctx/6 (CONTEXT_MESSAGE_TOKEN_BUDGET). */
  messageTokenBudget?: number;
  /** Memory facts as of the last run, so the first model call need not wait for the store. */
  memoryCache?: MemoryCache;
  /** Names of the project's user tools (registered in `tools`), offered per profile. */
  userTools?: readonly string[];
  /** MCP tools (registered in `tools`), offered per profile's `tools.mcp`. */
  mcpTools?: readonly McpToolRef[];
  /** Ask a person to confirm a complex plan (interactive runs only). */
  confirmPlan?: (planText: string) => Promise<boolean>;
}

/** What a sub-agent turn needs beyond a normal turn (set by `runEphemeral`). */
export interface SubagentTurn {
  /** Session-aware tools (files, scratchpad) act on the parent's session. */
  parentSessionId: string;
  /** Fully resolved system prompt (custom, inherited or the profile's sub-agent prompt). */
  systemPrompt: string;
  /** Injected as a synthetic user/assistant exchange before the task. */
  contextTransfer?: string;
  /** Tool names (resolved from the profile's `tools.subagent`, falling back to `tools.agent`). */
  toolNames: string[];
  excludeTools: string[];
  /** Run Phase 1 + 3 before the tool loop (`subagent_planning_enabled`). */
  autoPlan: boolean;
  /** Profile ids from the root agent down to this one. */
  agentPath: string[];
  /** 1 for a sub-agent of the root agent. */
  depth: number;
}

/**
 * What every turn of one invocation shares (built once by the CLI; a sub-agent inherits it
 * whole): the model and how it is asked, where tools run and what they may do.
 */
export interface RunSettings {
  /** Configured model; a profile's `model` overrides it. */
  model: string;
  cwd: string;
  numCtx: number;
  /** The user set num_ctx: lowered to the model's trained context length all the same, with a warning. */
  numCtxExplicit?: boolean;
  /** llm.think: true, false, or an effort level the main calls send as it is. */
  think: ThinkValue;
  /** The user set llm.think: a model that cannot think gets a warning, not silence. */
  thinkExplicit?: boolean;
  keepAlive: string | number;
  temperature?: number;
  interactive: boolean;
  shell: ShellPolicy;
  redact: (text: string) => string;
  heartbeatMs?: number;
  /**
   * Milliseconds a model call waits out a transient Ollama outage before exit 75
   * (`llm.outage_retry`: minutes in loop mode, 0 for a one-shot unless set). Absent or 0: not at
   * all. A run setting, so a sub-agent waits as its parent does.
   */
  outageRetryMs?: number;
  /**
   * Appended to the profile's prompt inside the one system message, the same bytes for the whole
   * run: project instructions (AGENTS.md…) and `--append-system-prompt`. Sub-agents get it too.
   */
  systemAppendix?: string;
}

/** Every key of `RunSettings`, so a turn's options split in one place (`splitTurnOptions`). */
const RUN_SETTING_KEYS = [
  'model',
  'cwd',
  'numCtx',
  'numCtxExplicit',
  'think',
  'thinkExplicit',
  'keepAlive',
  'temperature',
  'interactive',
  'shell',
  'redact',
  'heartbeatMs',
  'outageRetryMs',
  'systemAppendix',
] as const satisfies ReadonlyArray<keyof RunSettings>;
// A RunSettings field missing from the list above is a type error here.
const everySettingListed: Exclude<keyof RunSettings, (typeof RUN_SETTING_KEYS)[number]> extends never ? true : never = true;
void everySettingListed;

/** What one turn is about: its session, the message, and the limits and extras of this turn only. */
export interface TurnInput {
  sessionId: string;
  /** Create the session (true) or continue it, loading its context (false). */
  newSession: boolean;
  message: string;
  profileId: string;
  /** Caps tool-loop iterations (else the profile's `max_iterations`). */
  maxIterations?: number;
  signal: AbortSignal;
  kind?: SessionKind;
  parentSessionId?: string | null;
  subagent?: SubagentTurn;
  /** Registered tools offered on top of the profile's (loop mode adds `loop_signal`). */
  extraTools?: string[];
  /** `--allowed-tools` / `--disallowed-tools`: narrows the profile's tools for this run. */
  toolFilter?: ToolFilter;
  /** `--output-schema`: the final answer is asked again with Ollama's `format` and checked. */
  outputSchema?: OutputSchema;
}

/** The public shape callers pass (cli/, loop/): settings and input in one object. */
export type TurnOptions = RunSettings & TurnInput;

/** The run settings of `opts` alone (what a sub-agent inherits); the rest is the turn's input. */
export function splitTurnOptions(opts: TurnOptions): { settings: RunSettings; input: TurnInput } {
  const settings: Record<string, unknown> = {};
  const input: Record<string, unknown> = { ...opts };
  for (const key of RUN_SETTING_KEYS) {
    if (key in opts) settings[key] = opts[key];
    delete input[key];
  }
  return { settings: settings as unknown as RunSettings, input: input as unknown as TurnInput };
}

/** Which of the profile's tools a run keeps (names; `only` absent = all). */
export interface ToolFilter {
  only?: readonly string[];
  except?: readonly string[];
}

/** A JSON Schema for the final answer and its checker (ajv, compiled by the caller). */
export interface OutputSchema {
  /** Sent as Ollama's `format` (the server constrains the answer to it). */
  schema: Record<string, unknown>;
  /** Problems of a parsed answer, one line each; empty when it matches. */
  check: (value: unknown) => string[];
}

export interface TurnOutcome {
  stopReason: StopReason;
  text: string;
  iterations: number;
  /** Model calls made. */
  modelCalls: number;
  usage: ChatUsage;
  /** Why the turn produced no usable answer (`model_error`, `truncated`), one line. */
  error?: string;
  /** With `outputSchema`: the final answer, parsed and matching the schema. */
  structured?: unknown;
  /** With `outputSchema`: why the answer did not match after the retry (one line each). */
  schemaErrors?: string[];
}

export type { AgentEvent };
