/**
 * One turn's data, and the only thing the steps (model step, tool batch, host) and the services
 * (compression, planning, memory extraction, sub-agents) read: the model's view and its token
 * estimate, usage, profile/model/tools, the writer, the event channel, and what the turn has
 * produced so far. Services never write into it: they return their changes and the driver
 * (`turn.ts`) or the host (`turn-host.ts`) applies them here.
 */
import type { ChatMessage, ChatUsage, ThinkValue, ToolSchema } from '../llm/types.js';
import type { McpToolRef } from '../mcp/mcp-tools.js';
import { selectMcpTools } from '../mcp/select.js';
import type { Profile } from '../profiles/types.js';
import type { Store } from '../store/types.js';
import type { TodoItem, ToolContext, TurnHost } from '../tools/types.js';
import type { AgentDeps, RunSettings, TurnInput } from './agent-types.js';
import type { ContextBuilder } from './context-builder.js';
import type { AgentEvent } from './events.js';
import { SerialWriter } from './serial-writer.js';
import { estimateTokens, messageChars } from './tokens.js';
import { filterTools } from './tool-filter.js';
import { EventChannel } from './wait-with-heartbeat.js';

/** Silence after which a heartbeat event is emitted (SPEC §4). */
export const HEARTBEAT_MS = 15_000;

/**
 * num_ctx to send and budget with: the configured one, lowered to the model's trained context
 * length, set by the user or not. Ollama clamps a larger num_ctx to the GGUF's trained context
 * with only a log line (llm/server.go 111-117; server/sched.go 149-167 `effectiveContext`), so a
 * budget above it would compress too late while the server truncates (audit D4).
 */
export function effectiveNumCtx(configured: number, contextLength: number | undefined): number {
  if (contextLength === undefined || contextLength <= 0) return configured;
  return Math.min(configured, contextLength);
}

/**
 * Tools the profile may call that exist in the registry, in profile order, then the project's
 * user tools unless the profile opts out (`user_tools_enabled: false`), then the MCP tools its
 * `tools.mcp` selects.
 */
export function toolsForProfile(
  profile: Profile,
  has: (name: string) => boolean,
  subagent = false,
  userTools: readonly string[] = [],
  mcpTools: readonly McpToolRef[] = [],
): string[] {
  const { agent, subagent: sub, mcp } = profile.settings.tools;
  const wanted = subagent && sub.length > 0 ? sub : agent;
  const names = wanted.filter(has);
  if (profile.settings.user_tools_enabled) for (const t of userTools) if (!names.includes(t)) names.push(t);
  for (const t of selectMcpTools(mcp, mcpTools)) if (has(t) && !names.includes(t)) names.push(t);
  return names;
}

/** A compression's result, applied by the driver (`applyCompression`). */
export interface CompressionChange {
  reason: 'preturn' | 'midturn' | 'postturn' | 'manual';
  /** The new context (summary + kept messages). */
  context: ChatMessage[];
  /** What the stored archive records of the messages it replaced. */
  archive: { summary: string; messages: ChatMessage[]; tokensBefore: number; tokensAfter: number };
  /** Messages before the compression (for `context_compressed`). */
  messagesBefore: number;
  /** Events to emit after it was applied (a fallback warning). */
  events: AgentEvent[];
}

export class TurnState {
  readonly writer: SerialWriter;
  readonly channel = new EventChannel();
  readonly now: () => number;
  readonly toolCtx: ToolContext;
  /** Tokens this turn spent (its own calls, and the planner's and memory extraction's). */
  readonly usage: ChatUsage = { promptTokens: 0, completionTokens: 0 };
  modelCalls = 0;
  /** 1-based tool-loop iteration under way (0 before the first). */
  iteration = 0;
  /** Set by a `todo_updated` event of this turn; consumed after the tool batch. */
  latestTodos: TodoItem[] | null = null;
  /** The plan the plan tool just made, shown (display buffer, `is_plan`) after the tool batch. */
  pendingPlan: string | null = null;
  /** A profile switch asked for by switch_profile, applied after the tool batch. */
  pendingProfile: string | null = null;
  /** The model's trained context length from /api/show (undefined: the server did not say). */
  contextLength: number | undefined;
  /** The message that started this turn (the user's task): compression never summarises it. */
  taskMessage: ChatMessage | null = null;
  /** Memory summary for the system message (loaded at the start of the turn). */
  memory: ChatMessage | null = null;
  /** The one system message of every request (prompt + memory), built once per profile. */
  system: ChatMessage | null = null;
  /**
   * What requests send as `think`: the configured value (true or an effort level) when the model
   * supports thinking, else false.
   */
  think: ThinkValue = false;
  /** The model `think` was decided for (a profile switch may change the model). */
  modelChecked: string | null = null;
  /** The answer shown at the end of the turn. */
  finalText = '';
  /** Why the turn ended without an answer it could use (`model_error`), for the result. */
  failure: string | undefined;
  /** `--output-schema`: what came of the structured answer. */
  structured: { value: unknown } | { errors: string[] } | undefined;

  /** The model's view for this turn (stored context + what this turn added). */
  private readonly view: ChatMessage[] = [];
  private currentNumCtx: number;
  private currentProfile: Profile;
  private currentModel: string;
  private names: string[] = [];
  /**
   * The most this agent may ever hold: its profile's tools (capped by the agent that started
   * it) minus exclusions. Sub-agents and profile switches get at most these (`tool-ceiling.ts`).
   */
  private ceiling: string[] = [];
  private toolSchemas: ToolSchema[] = [];
  private allowedTools = new Set<string>();
  private schemaChars = 0;
  /** Real prompt tokens of the last call, and chars added since (token estimate). */
  private baseline: number | null = null;
  private charsSinceBaseline = 0;
  private totalChars = 0;
  /** The context the server really loaded, learnt from an overflow refusal (context-overflow.ts). */
  private serverWindow: number | undefined;
  /**
   * The last call's real prompt tokens while the history has only grown since (null after a
   * compression, a loaded session or a profile switch): what the silent-truncation check compares with.
   */
  private lastPromptCount: number | null = null;

  constructor(
    readonly deps: AgentDeps,
    readonly settings: RunSettings,
    readonly input: TurnInput,
    readonly builder: ContextBuilder,
    profile: Profile,
  ) {
    this.currentProfile = profile;
    this.currentModel = profile.settings.model ?? settings.model;
    this.currentNumCtx = settings.numCtx;
    this.now = deps.now ?? Date.now;
    this.writer = new SerialWriter(deps.store, input.signal);
    const store = deps.store;
    this.toolCtx = {
      cwd: settings.cwd,
      sessionId: input.subagent?.parentSessionId ?? input.sessionId,
      todoSessionId: input.sessionId,
      signal: input.signal,
      state: {
        getTodos: async (id) => (await store).state.getTodos(id),
        setTodos: async (id, items) => {
          await this.writesLanded();
          return (await store).state.setTodos(id, items);
        },
        getScratchpad: async (id) => (await store).state.getScratchpad(id),
        setScratchpad: async (id, entries) => {
          await this.writesLanded();
          return (await store).state.setScratchpad(id, entries);
        },
      },
      shell: settings.shell,
      redact: settings.redact,
      emit: (ev) => this.emit(ev),
      interactive: settings.interactive,
      stepValidation: profile.settings.step_validation_enabled,
      agentPath: input.subagent?.agentPath ?? [profile.id],
    };
    this.loadTools(input.subagent?.toolNames ?? filterTools(this.profileTools(profile), input.toolFilter));
  }

  /**
   * Waits for the writes queued so far (a new session's creation among them, held until the
   * model answered): what a tool writes to the store itself refers to the session.
   */
  writesLanded(): Promise<void> {
    return this.writer.flush();
  }

  /** The agent-level tools' host (set once by the driver; the tools reach the turn through it). */
  attachHost(host: TurnHost): void {
    this.toolCtx.host = host;
  }

  get signal(): AbortSignal {
    return this.input.signal;
  }

  get heartbeatMs(): number {
    return this.settings.heartbeatMs ?? HEARTBEAT_MS;
  }

  /** The model's view: read-only outside (`replaceContext` / `applyCompression` swap it). */
  get context(): readonly ChatMessage[] {
    return this.view;
  }

  get numCtx(): number {
    return this.currentNumCtx;
  }

  /**
   * Tokens a request may take: num_ctx, or the smaller context the server showed it really has
   * (an overflow refusal). num_ctx itself is still what is sent: changing it reloads the model.
   */
  get contextBudget(): number {
    return this.serverWindow !== undefined ? Math.min(this.currentNumCtx, this.serverWindow) : this.currentNumCtx;
  }

  /** See `lastPromptCount`. */
  get previousPromptTokens(): number | null {
    return this.lastPromptCount;
  }

  /**
   * After an overflow refusal: the budget becomes the server's window and the estimate restarts
   * from the refused prompt's size, so compression sees the conversation as the server does.
   */
  adoptServerContext(window: number, baseline: number | undefined): void {
    this.serverWindow = window;
    if (baseline !== undefined) {
      this.baseline = baseline;
      this.charsSinceBaseline = 0;
    }
  }

  get profile(): Profile {
    return this.currentProfile;
  }

  get model(): string {
    return this.currentModel;
  }

  get toolNames(): readonly string[] {
    return this.names;
  }

  get toolCeiling(): readonly string[] {
    return this.ceiling;
  }

  /** The same array until the tools change (request-body.ts reuses a frame only for an identical `tools`). */
  get schemas(): ToolSchema[] {
    return this.toolSchemas;
  }

  get allowed(): ReadonlySet<string> {
    return this.allowedTools;
  }

  get sessionId(): string {
    return this.input.sessionId;
  }

  get isSubagent(): boolean {
    return this.input.subagent !== undefined;
  }

  /** The user's task for this turn (pinned for planning and goal anchoring). */
  get task(): string {
    return this.input.message;
  }

  get maxIterations(): number {
    return this.input.maxIterations ?? this.currentProfile.settings.max_iterations;
  }

  store(): Promise<Store> {
    return this.deps.store;
  }

  /** num_ctx for the model's trained context length (from /api/show; undefined: not known). */
  fitNumCtx(contextLength: number | undefined): void {
    this.currentNumCtx = effectiveNumCtx(this.settings.numCtx, contextLength);
  }

  /** The profile's tools as this agent would get them (agent or sub-agent list, user tools). */
  profileTools(profile: Profile): string[] {
    return toolsForProfile(profile, (n) => this.deps.tools.has(n), this.isSubagent, this.deps.userTools, this.deps.mcpTools);
  }

  /** Switches to `profile` (switch_profile) with the tools `base`; the system message is rebuilt. */
  adoptProfile(profile: Profile, base: readonly string[]): void {
    this.currentProfile = profile;
    this.currentModel = profile.settings.model ?? this.settings.model;
    this.builder.invalidate(profile.id);
    this.system = null;
    this.lastPromptCount = null;
    this.loadTools(base);
  }

  private loadTools(base: readonly string[]): void {
    const excluded = new Set(this.input.subagent?.excludeTools ?? []);
    this.ceiling = base.filter((n) => !excluded.has(n));
    const names = this.currentProfile.settings.planning_enabled ? [...this.ceiling] : this.ceiling.filter((n) => n !== 'plan');
    for (const extra of this.input.extraTools ?? []) if (this.deps.tools.has(extra) && !names.includes(extra)) names.push(extra);
    this.names = names;
    this.allowedTools = new Set(names);
    this.toolSchemas = this.deps.tools.schemas(names);
    this.schemaChars = JSON.stringify(this.toolSchemas).length;
    this.toolCtx.stepValidation = this.currentProfile.settings.step_validation_enabled;
  }

  systemPrompt(): string {
    return this.input.subagent?.systemPrompt ?? this.builder.systemPrompt(this.currentProfile.id);
  }

  /** Appends to the model's view (and the token estimate); storage is the caller's job. */
  addToContext(m: ChatMessage): void {
    this.view.push(m);
    const c = messageChars(m);
    this.totalChars += c;
    this.charsSinceBaseline += c;
  }

  /** Replaces the model's view (a loaded session, a compression) and restarts the estimate from it. */
  replaceContext(messages: readonly ChatMessage[]): void {
    this.view.length = 0;
    this.view.push(...messages);
    this.totalChars = messages.reduce((n, m) => n + messageChars(m), 0);
    this.baseline = null;
    this.charsSinceBaseline = this.totalChars;
    this.lastPromptCount = null;
  }

  /**
   * Applies a compression: the new context and the archive of what it replaced are stored in
   * one write (queued behind earlier appends, so the replace sees every message written so far;
   * sub-agents keep their context in memory only), then the view is swapped. Returns the events.
   */
  async applyCompression(change: CompressionChange): Promise<AgentEvent[]> {
    if (!this.isSubagent) {
      const { context, archive, reason } = change;
      this.writer.enqueue((s) => s.archives.compactContext(this.sessionId, context, { reason, ...archive }));
      await this.writer.flush();
    }
    this.replaceContext(change.context);
    return [
      { type: 'context_compressed', messages_before: change.messagesBefore, messages_after: change.context.length, estimated_tokens_after: this.estimate() },
      ...change.events,
    ];
  }

  /** Characters every request carries besides the context: system prompt, memory, tool schemas. */
  fixedRequestChars(): number {
    return this.systemPrompt().length + (this.settings.systemAppendix?.length ?? 0) + (this.memory?.content.length ?? 0) + this.schemaChars;
  }

  /** Estimated prompt tokens of the next request (system prompt and tool schemas included). */
  estimate(): number {
    return estimateTokens({ baseline: this.baseline, charsSinceBaseline: this.charsSinceBaseline, totalChars: this.totalChars + this.fixedRequestChars() });
  }

  /** Counts a call's usage; its real prompt tokens restart the estimate. */
  countUsage({ promptTokens, completionTokens }: ChatUsage): void {
    this.usage.promptTokens += promptTokens;
    this.usage.completionTokens += completionTokens;
    if (promptTokens > 0) {
      this.baseline = promptTokens;
      this.charsSinceBaseline = 0;
      this.lastPromptCount = promptTokens;
    }
  }

  /** Model calls made for the turn by a service (planner, memory extraction), and what they cost. */
  recordServiceCalls(calls: number, usage: ChatUsage): void {
    this.modelCalls += calls;
    this.usage.promptTokens += usage.promptTokens;
    this.usage.completionTokens += usage.completionTokens;
  }

  /** Saves a message to the display buffer (and the stored context unless `toContext` is false). */
  persist(m: ChatMessage, opts: { toContext?: boolean; isPlan?: boolean; usage?: ChatUsage } = {}): void {
    const toContext = this.isSubagent ? false : (opts.toContext ?? true);
    const { usage } = opts;
    this.writer.enqueue((s) => s.messages.append(this.input.sessionId, m, { toContext, isPlan: opts.isPlan ?? false, ...(usage ? { usage } : {}) }));
  }

  /** The plan made since the last call, as the assistant message the display buffer shows. */
  takePlan(): ChatMessage | null {
    const text = this.pendingPlan;
    this.pendingPlan = null;
    return text === null ? null : { role: 'assistant', content: text };
  }

  /** Forwards an event into this turn's stream (tool side events, planning, sub-agents). */
  emit(ev: AgentEvent): void {
    // The todo list as the todo tool or the planner left it: no need to read it back.
    if (ev.type === 'todo_updated' && ev.is_subagent !== true) this.latestTodos = ev.todos;
    this.channel.push(ev);
  }
}
