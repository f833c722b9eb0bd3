/**
 * Tools the model can call. A tool never throws for a bad call it can explain: it returns
 * `{ ok: false, output }` and the model reads the output. Anything it does throw is turned
 * into a failed result by the registry, never a crash of the run.
 */
import type { z } from 'zod';
import type { Sandbox } from '../sandbox/modes.js';

/** Per-session state a tool may read and write (todo, scratchpad). */
export interface SessionStateStore {
  getTodos(sessionId: string): Promise<TodoItem[]>;
  setTodos(sessionId: string, items: TodoItem[]): Promise<void>;
  getScratchpad(sessionId: string): Promise<ScratchpadEntry[]>;
  setScratchpad(sessionId: string, entries: ScratchpadEntry[]): Promise<void>;
}

export type TodoStatus = 'pending' | 'in_progress' | 'done';

export interface TodoItem {
  id: number;
  text: string;
  status: TodoStatus;
  /** How the step was verified (required to mark done when step validation is on). */
  validation?: string;
}

export interface ScratchpadEntry {
  key: string;
  /** `note`, `finding` or `error`; re-plans pack findings and errors. */
  kind: 'note' | 'finding' | 'error';
  value: string;
}

/** Shell allow/deny policy (SPEC §10): glob patterns over the command line; deny wins. */
export interface ShellPolicy {
  allow: string[];
  deny: string[];
  /** Default timeout, seconds. */
  timeoutS: number;
  /** Bytes of combined output kept (head + tail). */
  maxOutputBytes: number;
  /** `--sandbox`: commands run inside it (absent: off). The policy above still applies first. */
  sandbox?: Sandbox;
  /** The environment commands start from: the invocation's (absent: navi's process's). */
  env?: Record<string, string | undefined>;
}

/** Side-channel events a tool may emit while it runs (rendered by the CLI, stored by nobody). */
export type ToolSideEvent =
  | { type: 'todo_updated'; todos: TodoItem[] }
  | { type: 'warning'; message: string; code: string };

export interface ToolContext {
  /** Working directory; every file path is confined to it. */
  cwd: string;
  /** Session whose todo/scratchpad the tool acts on (the parent's for sub-agents). */
  sessionId: string;
  signal: AbortSignal;
  state: SessionStateStore;
  shell: ShellPolicy;
  /** Removes secret values from text before anyone sees it. */
  redact: (text: string) => string;
  emit: (event: ToolSideEvent) => void;
  /** Whether a person can answer a prompt (never true in headless runs). */
  interactive: boolean;
  /**
   * Profile's `step_validation_enabled`: when true, `todo update` to `done` needs a `validation`
   * saying how the step was checked. Absent means off.
   */
  stepValidation?: boolean;
  /**
   * Session whose todo list `todo` acts on when it differs from `sessionId`: a sub-agent works
   * on its parent's files and scratchpad but keeps its own todo (seed 000).
   */
  todoSessionId?: string;
  /** The running turn, for the agent-level tools (plan, spawn_agent, …); absent outside an agent run. */
  host?: TurnHost;
  /** Profile ids from the root agent down to the one running this tool. */
  agentPath?: readonly string[];
  /**
   * Bytes of a result the model will see; set by the registry for each call. A tool that
   * captures more (shell) caps to it itself, so its omitted-bytes marker counts the real loss.
   */
  outputLimitBytes?: number;
}

/**
 * What the tools that act on the turn itself (plan, spawn_agent, switch_profile,
 * remember/forget) may ask of it. Seed 000 passes this in ContextVars; navi hands it to every
 * tool call in its `ToolContext` (`host`, `agentPath`): a sub-agent's tools get the sub-agent's
 * turn, and nothing needs restoring when it returns. (An AsyncLocalStorage did this before: it
 * turns on a hook for every promise the process creates, a cost on every database call and
 * streamed chunk.) Declared here, beside `ToolContext`, because tools use it and `agent/` implements
 * it (`Turn`): tools never import the agent.
 */
export interface TurnHost {
  /** Runs the planning pipeline (seed 000 "Planning"); `reason` → re-plan. */
  plan(args: { reason?: string; updated_goal?: string }): Promise<ToolResult>;
  /** Runs a sub-agent to completion (blocking) and returns its answer. */
  spawnAgent(args: SpawnArgs): Promise<ToolResult>;
  /** Switches profile from the next model call on. */
  switchProfile(profileId: string): Promise<ToolResult>;
  remember(fact: string): Promise<ToolResult>;
  forget(id: string): Promise<ToolResult>;
}

/** `spawn_agent`'s arguments, as the model sends them. */
export interface SpawnArgs {
  task: string;
  profile_id?: string;
  exclude_tools?: string[];
  briefing?: string;
  timeout_seconds?: number;
  max_iterations?: number;
  context_transfer?: string;
  custom_system_prompt?: string;
  inherit_system_prompt?: boolean;
}

export interface ToolResult {
  ok: boolean;
  /** What the model reads. Already redacted and capped by the registry. */
  output: string;
}

export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  /** Validates the model's arguments; also the source of the JSON schema sent to the model. */
  schema: S;
  /**
   * JSON schema sent to the model instead of the one derived from `schema`. For tools that
   * declare JSON schema themselves (user tools in `./tools/`); built-ins leave it unset.
   */
  parameters?: Record<string, unknown>;
  execute(args: z.infer<S>, ctx: ToolContext): Promise<ToolResult>;
}
