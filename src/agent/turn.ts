/**
 * One agent turn: the tool loop of seed 000 steps 1–10 as an async generator of events.
 * Holds the turn's mutable state (context, profile, counters) and implements the TurnHost
 * that agent-level tools (plan, spawn_agent, switch_profile, remember, forget) call back into.
 */
import type { ChatMessage, ChatUsage, ToolSchema } from '../llm/types.js';
import type { Profile } from '../profiles/types.js';
import type { Store } from '../store/types.js';
import type { SpawnArgs, TodoItem, ToolContext, ToolResult, TurnHost } from '../tools/types.js';
import { InvalidInputError, isAbortError, isNaviError } from '../errors.js';
import type { McpToolRef } from '../mcp/mcp-tools.js';
import { selectMcpTools } from '../mcp/select.js';
import { noToolsMessage } from '../llm/ollama-errors.js';
import type { AgentDeps, TurnOptions, TurnOutcome } from './agent-types.js';
import type { ContextBuilder } from './context-builder.js';
import type { AgentEvent, StopReason } from './events.js';
import { reminderNotes, StallCounter, todoFingerprint, withNotes } from './mechanics.js';
import { capArgsForEvent, capForEvent } from './event-caps.js';
import {
  assistantMessage,
  callId,
  callModel,
  correctionNote,
  giveUpAdvice,
  MAX_MODEL_RETRIES,
  truncatedWarning,
  usageOf,
  type ModelCallOutcome,
} from './model-call.js';
import { unansweredCalls } from './context-repair.js';
import { memoryMessage, refreshMemory } from './memory.js';
import { SerialWriter } from './serial-writer.js';
import { estimateTokens, messageChars } from './tokens.js';
import { capTools, droppedToolsNote } from './tool-ceiling.js';
import { filterTools } from './tool-filter.js';
import { STRUCTURED_ATTEMPTS, structuredAnswer } from './structured-answer.js';
import { EventChannel, waitWithHeartbeat } from './wait-with-heartbeat.js';

/** Silence after which a heartbeat event is emitted (SPEC §4). */
export const HEARTBEAT_MS = 15_000;
/** num_ctx to send: the configured one, lowered to the model's context length when not explicit. */
export function effectiveNumCtx(configured: number, explicit: boolean, contextLength: number | undefined): number {
  if (explicit || contextLength === undefined || contextLength <= 0) return configured;
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

type MechanicsTodos = Parameters<typeof reminderNotes>[0]['todos'];

/** Hooks the Agent provides to a turn: things that need the whole agent (sub-agents, planning, compression). */
export interface TurnServices {
  spawn(turn: Turn, args: SpawnArgs): Promise<ToolResult>;
  plan(turn: Turn, args: { reason?: string; updated_goal?: string }): Promise<ToolResult>;
  /** Compresses the context when due (or always, for `manual`); yields its events. */
  maybeCompress(turn: Turn, reason: 'preturn' | 'midturn' | 'postturn'): AsyncGenerator<AgentEvent, void>;
  /** Post-turn workers besides compression (memory extraction). */
  afterTurn(turn: Turn): Promise<void>;
  /** The context as sent: oversized single messages truncated for the view only. */
  view(turn: Turn): readonly ChatMessage[];
}

export class Turn implements TurnHost {
  readonly writer: SerialWriter;
  readonly channel = new EventChannel();
  /** Tokens this turn spent (its own calls, and the planner's and memory extraction's). */
  readonly #usage: ChatUsage = { promptTokens: 0, completionTokens: 0 };
  /** The model's view for this turn (stored context + what this turn added). */
  readonly #context: ChatMessage[] = [];
  #modelCalls = 0;
  #iteration = 0;
  #numCtx: number;
  #profile: Profile;
  #model: string;
  #toolNames: string[] = [];
  /**
   * The most this agent may ever hold: its profile's tools (capped by the agent that started
   * it) minus exclusions. Sub-agents and profile switches get at most these (`tool-ceiling.ts`).
   */
  #toolCeiling: string[] = [];
  #schemas: ToolSchema[] = [];
  /** The plan the plan tool just made, shown (display buffer, `is_plan`) after the tool batch. */
  #pendingPlan: string | null = null;
  /** Real prompt tokens of the last call, and chars added since (token estimate). */
  #baseline: number | null = null;
  #charsSinceBaseline = 0;
  #totalChars = 0;
  private pendingProfile: string | null = null;
  /** Set by a `todo_updated` event of this turn; consumed after the tool batch. */
  private latestTodos: TodoItem[] | null = null;
  private memory: ChatMessage | null = null;
  /** The one system message of every request (prompt + memory), built once per profile. */
  private system: ChatMessage | null = null;
  /** Whether requests ask for thinking: configured, and the model supports it. */
  private think = false;
  /** The model `think` was decided for (a profile switch may change the model). */
  private modelChecked: string | null = null;
  private allowed = new Set<string>();
  private schemaChars = 0;
  private finalText = '';
  /** Why the turn ended without an answer it could use (`model_error`), for the result. */
  private failure: string | undefined;
  /** `--output-schema`: Ollama's `format` for the call under way, and what came of it. */
  private format: Record<string, unknown> | undefined;
  private structured: { value: unknown } | { errors: string[] } | undefined;
  readonly toolCtx: ToolContext;
  readonly now: () => number;

  constructor(
    readonly deps: AgentDeps,
    readonly opts: TurnOptions,
    readonly builder: ContextBuilder,
    private readonly services: TurnServices,
    profile: Profile,
  ) {
    this.#profile = profile;
    this.#model = profile.settings.model ?? opts.model;
    this.#numCtx = opts.numCtx;
    this.now = deps.now ?? Date.now;
    this.writer = new SerialWriter(deps.store, opts.signal);
    const store = deps.store;
    this.toolCtx = {
      cwd: opts.cwd,
      sessionId: opts.subagent?.parentSessionId ?? opts.sessionId,
      todoSessionId: opts.sessionId,
      signal: opts.signal,
      state: {
        getTodos: async (id) => (await store).state.getTodos(id),
        setTodos: async (id, items) => (await store).state.setTodos(id, items),
        getScratchpad: async (id) => (await store).state.getScratchpad(id),
        setScratchpad: async (id, entries) => (await store).state.setScratchpad(id, entries),
      },
      shell: opts.shell,
      redact: opts.redact,
      emit: (ev) => this.emit(ev),
      interactive: opts.interactive,
      stepValidation: profile.settings.step_validation_enabled,
      host: this,
      agentPath: opts.subagent?.agentPath ?? [profile.id],
    };
    this.loadTools(opts.subagent?.toolNames ?? filterTools(this.profileTools(profile), opts.toolFilter));
  }

  // ── What the services (planning, compression, memory extraction, sub-agents) may read ──

  get usage(): Readonly<ChatUsage> {
    return this.#usage;
  }

  /** The model's view: read-only outside the turn (`replaceContext` is how compression swaps it). */
  get context(): readonly ChatMessage[] {
    return this.#context;
  }

  get modelCalls(): number {
    return this.#modelCalls;
  }

  get iteration(): number {
    return this.#iteration;
  }

  get numCtx(): number {
    return this.#numCtx;
  }

  get profile(): Profile {
    return this.#profile;
  }

  get model(): string {
    return this.#model;
  }

  get toolNames(): readonly string[] {
    return this.#toolNames;
  }

  get toolCeiling(): readonly string[] {
    return this.#toolCeiling;
  }

  /** Model calls made for the turn by a service (planner, memory extraction), and what they cost. */
  recordServiceCalls(calls: number, usage: ChatUsage): void {
    this.#modelCalls += calls;
    this.#usage.promptTokens += usage.promptTokens;
    this.#usage.completionTokens += usage.completionTokens;
  }

  /** The plan the plan tool made: the display buffer shows it after the tool batch. */
  offerPlan(text: string): void {
    this.#pendingPlan = text;
  }

  /** num_ctx for the model's trained context length (`navi sessions compact` outside a turn). */
  fitNumCtx(contextLength: number | undefined): void {
    this.#numCtx = effectiveNumCtx(this.opts.numCtx, this.opts.numCtxExplicit ?? true, contextLength);
  }

  get sessionId(): string {
    return this.opts.sessionId;
  }

  get isSubagent(): boolean {
    return this.opts.subagent !== undefined;
  }

  /** The user's task for this turn (pinned for planning and goal anchoring). */
  get task(): string {
    return this.opts.message;
  }

  get maxIterations(): number {
    return this.opts.maxIterations ?? this.#profile.settings.max_iterations;
  }

  store(): Promise<Store> {
    return this.deps.store;
  }

  /** The profile's tools as this agent would get them (agent or sub-agent list, user tools). */
  private profileTools(profile: Profile): string[] {
    return toolsForProfile(profile, (n) => this.deps.tools.has(n), this.isSubagent, this.deps.userTools, this.deps.mcpTools);
  }

  private loadTools(base: readonly string[]): void {
    const excluded = new Set(this.opts.subagent?.excludeTools ?? []);
    this.#toolCeiling = base.filter((n) => !excluded.has(n));
    const names = this.#profile.settings.planning_enabled ? [...this.#toolCeiling] : this.#toolCeiling.filter((n) => n !== 'plan');
    for (const extra of this.opts.extraTools ?? []) if (this.deps.tools.has(extra) && !names.includes(extra)) names.push(extra);
    this.#toolNames = names;
    this.allowed = new Set(names);
    this.#schemas = this.deps.tools.schemas(names);
    this.schemaChars = JSON.stringify(this.#schemas).length;
    this.toolCtx.stepValidation = this.#profile.settings.step_validation_enabled;
  }

  systemPrompt(): string {
    return this.opts.subagent?.systemPrompt ?? this.builder.systemPrompt(this.#profile.id);
  }

  /** Appends to the model's view (and the token estimate); storage is the caller's job. */
  addToContext(m: ChatMessage): void {
    this.#context.push(m);
    const c = messageChars(m);
    this.#totalChars += c;
    this.#charsSinceBaseline += c;
  }

  /** Replaces the model's view (after compression) and restarts the estimate from it. */
  replaceContext(messages: ChatMessage[]): void {
    this.#context.length = 0;
    this.#context.push(...messages);
    this.#totalChars = messages.reduce((n, m) => n + messageChars(m), 0);
    this.#baseline = null;
    this.#charsSinceBaseline = this.#totalChars;
  }

  /** Characters every request carries besides the context: system prompt, memory, tool schemas. */
  fixedRequestChars(): number {
    return this.systemPrompt().length + (this.opts.systemAppendix?.length ?? 0) + (this.memory?.content.length ?? 0) + this.schemaChars;
  }

  /** Estimated prompt tokens of the next request (system prompt and tool schemas included). */
  estimate(): number {
    return estimateTokens({ baseline: this.#baseline, charsSinceBaseline: this.#charsSinceBaseline, totalChars: this.#totalChars + this.fixedRequestChars() });
  }

  /** Saves a message to the display buffer (and the stored context unless `toContext` is false). */
  persist(m: ChatMessage, opts: { toContext?: boolean; isPlan?: boolean; usage?: ChatUsage } = {}): void {
    const toContext = this.isSubagent ? false : (opts.toContext ?? true);
    const { usage } = opts;
    this.writer.enqueue((s) => s.messages.append(this.opts.sessionId, m, { toContext, isPlan: opts.isPlan ?? false, ...(usage ? { usage } : {}) }));
  }

  private end(stopReason: StopReason): AgentEvent {
    return {
      type: 'stream_end',
      stop_reason: stopReason,
      text: this.finalText,
      iterations: this.#iteration,
      usage: { prompt_tokens: this.#usage.promptTokens, completion_tokens: this.#usage.completionTokens },
    };
  }

  private async finish(stopReason: StopReason): Promise<TurnOutcome> {
    await this.writer.flush();
    return {
      stopReason,
      text: this.finalText,
      iterations: this.#iteration,
      modelCalls: this.#modelCalls,
      usage: this.#usage,
      ...(this.failure !== undefined ? { error: this.failure } : {}),
      ...(this.structured !== undefined ? ('value' in this.structured ? { structured: this.structured.value } : { schemaErrors: this.structured.errors }) : {}),
    };
  }

  async *run(): AsyncGenerator<AgentEvent, TurnOutcome> {
    try {
      return yield* this.loop();
    } finally {
      // Whatever ended the turn (error, consumer stopping early), queued writes still land.
      await this.writer.flush().catch(() => undefined);
    }
  }

  private async *start(): AsyncGenerator<AgentEvent, void> {
    const { opts } = this;
    if (opts.newSession) {
      // Stored once the model answered (released in loop()): a run that cannot reach the model
      // leaves no session behind. Sub-agents' sessions are the parent's business.
      if (!this.isSubagent) this.writer.hold();
      this.writer.enqueue((s) =>
        s.sessions.create({
          id: opts.sessionId,
          kind: opts.kind ?? (this.isSubagent ? 'subagent' : 'chat'),
          profile: this.#profile.id,
          cwd: opts.cwd,
          parentId: opts.parentSessionId ?? opts.subagent?.parentSessionId ?? null,
          title: opts.message.split('\n')[0]?.slice(0, 200) ?? '',
          model: this.#model,
        }),
      );
    } else {
      const store = await this.deps.store;
      this.replaceContext(await store.context.load(opts.sessionId));
      for (const m of unansweredCalls(this.#context)) {
        this.addToContext(m);
        this.persist(m);
      }
    }
    yield { type: 'run_started', profile: this.#profile.id, model: this.#model, cwd: opts.cwd, resumed: !opts.newSession };

    // The model's trained context length decides the effective num_ctx (unless the user set
    // one): a window the model was not trained for degrades answers, and num_ctx must not
    // change between calls (Ollama reloads the model when it does). /api/show is cheap; a
    // missing model is reported by the chat call itself, so a failure here only means no length.
    const [info, memory] = await Promise.all([
      this.deps.llm.showModel(this.#model, opts.signal).catch(() => null),
      this.isSubagent ? Promise.resolve(null) : memoryMessage(this.deps.store, this.deps.user ?? 'local', this.deps.memoryCache).catch(() => null),
    ]);
    this.memory = memory;
    this.system = null;
    this.#numCtx = effectiveNumCtx(opts.numCtx, opts.numCtxExplicit ?? true, info?.contextLength);
    const capabilities = info?.capabilities;
    const warning = this.adoptCapabilities(capabilities);
    yield {
      type: 'model_info',
      model: this.#model,
      num_ctx: this.#numCtx,
      ...(info?.contextLength !== undefined ? { context_length: info.contextLength } : {}),
      ...(capabilities !== undefined ? { capabilities } : {}),
      think: this.think,
    };
    if (warning !== null) yield warning;
    if (info?.contextLength !== undefined && this.#numCtx > info.contextLength) {
      yield {
        type: 'warning',
        code: 'num_ctx_exceeds_model',
        message: `llm.num_ctx ${this.#numCtx} exceeds ${this.#model}'s trained context length ${info.contextLength}; answers may degrade past it`,
      };
    }

    if (!opts.newSession) yield* this.services.maybeCompress(this, 'preturn');

    if (opts.subagent?.contextTransfer) {
      this.addToContext({ role: 'user', content: `Context from the agent that started you:\n${opts.subagent.contextTransfer}` });
      this.addToContext({ role: 'assistant', content: 'Understood.' });
    }
    const userMessage: ChatMessage = { role: 'user', content: opts.message };
    this.addToContext(userMessage);
    this.persist(userMessage);
  }

  /**
   * The messages of the next model call: the one system message, the context as viewed, and
   * this call's reminders in the last message (`withNotes`). `extra` is a note for this call
   * only (the correction after a model mistake).
   */
  buildRequest(todos: MechanicsTodos, stalled: number, extra?: string): ChatMessage[] {
    const p = this.#profile.settings;
    const notes = reminderNotes({
      settings: {
        iterationBudget: p.iteration_budget_enabled,
        goalAnchoring: p.goal_anchoring_enabled,
        goalInterval: p.goal_anchoring_interval,
        antiStall: p.anti_stall_enabled,
        antiStallThreshold: p.anti_stall_threshold,
      },
      iteration: this.#iteration,
      maxIterations: this.maxIterations,
      task: this.task,
      todos,
      stalledIterations: stalled,
    });
    if (extra !== undefined) notes.unshift(extra);
    const view = this.services.view(this);
    // One array of the final size: a long history is not pushed message by message on every call.
    const request = [this.systemMessage()].concat(view.some((m) => m.role === 'system') ? view.filter((m) => m.role !== 'system') : view);
    return withNotes(request, notes);
  }

  /**
   * Persona + profile prompt, then the memory summary: ONE system message, the same object for
   * every call of the turn. Ollama gathers all system messages at the top of the prompt, so a
   * second one would be merged there anyway (SPEC §8).
   */
  private systemMessage(): ChatMessage {
    if (this.system === null) {
      // Project instructions and --append-system-prompt after the profile's prompt, memory last:
      // the part that changes between runs comes after the parts that do not.
      const appendix = this.opts.systemAppendix;
      const prompt = appendix ? `${this.systemPrompt()}\n\n${appendix}` : this.systemPrompt();
      this.system = { role: 'system', content: this.memory ? `${prompt}\n\n${this.memory.content}` : prompt };
    }
    return this.system;
  }

  /**
   * Settles what the current model can be asked, from `/api/show` capabilities (undefined: an
   * old server that does not say). Returns a warning to emit, if any.
   */
  private adoptCapabilities(capabilities: string[] | undefined): AgentEvent | null {
    this.modelChecked = this.#model;
    // Ollama refuses tools to a model without the capability (HTTP 400, server/routes.go); an
    // agent without tools cannot work, and retrying later will not change the model.
    if (capabilities !== undefined && !capabilities.includes('tools') && this.#schemas.length > 0) {
      throw new InvalidInputError('model_no_tools', noToolsMessage(this.#model, `Ollama reports its capabilities as: ${capabilities.join(', ') || 'none'}`));
    }
    const wantsThink = this.opts.think && this.#profile.settings.think_enabled;
    // `think: true` to a model without `thinking` is an HTTP 400; unknown capabilities keep the
    // configured value, and a refusal is handled at the call (askModel).
    this.think = wantsThink && (capabilities === undefined || capabilities.includes('thinking'));
    return wantsThink && !this.think && this.opts.thinkExplicit === true ? this.noThinkingWarning() : null;
  }

  private noThinkingWarning(): AgentEvent {
    return {
      type: 'warning',
      code: 'thinking_unsupported',
      message: `model ${this.#model} does not support thinking; running without it (set llm.think: false to silence this)`,
    };
  }

  /**
   * One model call, asked again (bounded) when the model itself went wrong: a tool call Ollama
   * could not parse, or an empty reply. Each retry carries a short correction in its last
   * message; the failed attempt is neither stored nor sent back.
   */
  private async *askModel(todos: MechanicsTodos, stalled: number, note?: string): AsyncGenerator<AgentEvent, ModelCallOutcome> {
    const { opts } = this;
    let correction: string | undefined = note;
    if (this.modelChecked !== this.#model) {
      // switch_profile brought a profile with its own model.
      const info = await this.deps.llm.showModel(this.#model, opts.signal).catch(() => null);
      const warning = this.adoptCapabilities(info?.capabilities);
      if (warning !== null) yield warning;
    }
    for (let attempt = 0; ; attempt++) {
      // A store that failed to open (locked, unreachable) ends the run before a model call.
      this.writer.throwIfFailed();
      const request = {
        model: this.#model,
        messages: this.buildRequest(todos, stalled, correction),
        tools: this.#schemas.length > 0 ? this.#schemas : undefined,
        think: this.think,
        numCtx: this.#numCtx,
        temperature: this.#profile.settings.temperature ?? opts.temperature,
        keepAlive: opts.keepAlive,
        signal: opts.signal,
        ...(this.format !== undefined ? { format: this.format } : {}),
      };
      this.#modelCalls++;
      let outcome: ModelCallOutcome;
      try {
        outcome = yield* callModel({ llm: this.deps.llm, request, iteration: this.#iteration, channel: this.channel, heartbeatMs: opts.heartbeatMs ?? HEARTBEAT_MS, now: this.now });
      } catch (err) {
        // Capabilities were unknown and the server refused thinking: go on without it.
        if (err instanceof InvalidInputError && err.code === 'model_no_thinking' && this.think) {
          this.think = false;
          if (opts.thinkExplicit === true) yield this.noThinkingWarning();
          attempt--;
          continue;
        }
        throw err;
      }
      if (outcome.reply.usage) this.countUsage(outcome.reply.usage);
      if (outcome.kind !== 'mistake' || attempt >= MAX_MODEL_RETRIES || opts.signal.aborted) return outcome;
      yield {
        type: 'warning',
        code: outcome.mistake,
        message: `${outcome.detail}; asking again (retry ${attempt + 1} of ${MAX_MODEL_RETRIES})`,
        iteration: this.#iteration,
      };
      correction = correctionNote(outcome.mistake, outcome.detail);
    }
  }

  private countUsage({ promptTokens, completionTokens }: ChatUsage): void {
    this.#usage.promptTokens += promptTokens;
    this.#usage.completionTokens += completionTokens;
    if (promptTokens > 0) {
      this.#baseline = promptTokens;
      this.#charsSinceBaseline = 0;
    }
  }

  private async *loop(): AsyncGenerator<AgentEvent, TurnOutcome> {
    const { opts } = this;
    const { tools } = this.deps;
    const heartbeatMs = opts.heartbeatMs ?? HEARTBEAT_MS;
    yield* this.start();
    if (this.opts.subagent?.autoPlan) yield* this.autoPlan();

    const todosNow = async (): Promise<Awaited<ReturnType<Store['state']['getTodos']>>> =>
      (await this.deps.store).state.getTodos(this.opts.sessionId).catch(() => []);
    let todos = opts.newSession ? [] : await todosNow();
    const stall = new StallCounter(todoFingerprint(todos));

    while (this.#iteration < this.maxIterations) {
      if (opts.signal.aborted) {
        yield this.end('interrupted');
        return await this.finish('interrupted');
      }
      this.#iteration++;
      const iteration = this.#iteration;
      // Earlier iterations' writes are already under way (queued as they happened). They overlap
      // the model's prefill instead of delaying the request, and must have landed before
      // anything of this answer is stored or acted on: a crash loses no more than before (the
      // writes in flight), and a failed write stops the turn before a tool runs.
      let durable: Promise<void> | null = null;
      if (iteration > 1) {
        yield* this.services.maybeCompress(this, 'midturn');
        durable = this.writer.flush();
        durable.catch(() => undefined); // awaited below; not unhandled meanwhile
      }

      const estimate = this.estimate();
      if (estimate > this.#numCtx) {
        this.finalText =
          `The conversation no longer fits the model's context window (about ${estimate} tokens, num_ctx ${this.#numCtx}). ` +
          'Start a new session, or raise llm.num_ctx if the model supports it.';
        this.persist({ role: 'assistant', content: this.finalText }, { toContext: false });
        yield { type: 'text_delta', text: this.finalText, iteration };
        yield this.end('context_too_large');
        return await this.finish('context_too_large');
      }

      let outcome: ModelCallOutcome;
      try {
        outcome = yield* this.askModel(todos, stall.count);
      } catch (err) {
        // The model never answered (unreachable, not pulled, refused the request): a new
        // session's writes, still held, are dropped. Anything else keeps them (flushed below).
        if (isNaviError(err) && (err.status === 'llm_unavailable' || err.status === 'invalid_input')) this.writer.discard();
        // A database that failed meanwhile is the cause to report, not what it did to the call.
        this.writer.throwIfFailed();
        throw err;
      }
      this.writer.release();
      const { reply } = outcome;
      if (outcome.kind === 'interrupted' || opts.signal.aborted) {
        // Keep what was streamed: a stopped turn still shows its partial answer.
        if (reply.content.length > 0 || reply.thinking.length > 0) {
          this.finalText = reply.content;
          // Without calls: none of them ran, and a resumed session must not replay them.
          this.persist(assistantMessage({ ...reply, calls: [] }, iteration), { toContext: reply.content.length > 0, ...usageOf(reply) });
        }
        yield this.end('interrupted');
        return await this.finish('interrupted');
      }
      await durable;
      if (outcome.kind === 'mistake') {
        this.failure = `${outcome.detail}, ${MAX_MODEL_RETRIES + 1} times in a row; ${giveUpAdvice(outcome.mistake)}`;
        yield { type: 'error', code: outcome.mistake, message: this.failure, iteration };
        yield this.end('model_error');
        return await this.finish('model_error');
      }

      const assistant = assistantMessage(reply, iteration);
      // Sent back whole — content, tool calls and thinking (ollama-mapping.ts says why).
      this.addToContext(assistant);
      this.persist(assistant, usageOf(reply));
      const truncated = reply.doneReason === 'length';
      if (truncated) yield truncatedWarning(this.#model, reply, iteration);

      if (reply.calls.length === 0) {
        this.finalText = reply.content;
        if (truncated) this.failure = `the answer of model ${this.#model} was cut off at its output limit (done_reason "length")`;
        let reason: StopReason = truncated ? 'truncated' : 'completed';
        if (reason === 'completed' && opts.outputSchema !== undefined && !opts.signal.aborted) reason = yield* this.structuredFinal(todos, stall.count);
        yield this.end(reason);
        if (!opts.signal.aborted) {
          yield* this.services.maybeCompress(this, 'postturn');
          await this.services.afterTurn(this).catch(() => undefined);
        }
        return await this.finish(reason);
      }

      for (const [index, call] of (assistant.tool_calls ?? []).entries()) {
        const id = callId(iteration, index, call);
        const shownArgs = capArgsForEvent(call.arguments);
        yield { type: 'tool_started', call_id: id, name: call.name, arguments: shownArgs, iteration };
        const started = this.now();
        let result: ToolResult;
        if (opts.signal.aborted) {
          result = { ok: false, output: 'not run: navi was interrupted' };
        } else {
          try {
            result = yield* waitWithHeartbeat(tools.execute(call.name, call.arguments, this.toolCtx, this.allowed), {
              channel: this.channel,
              intervalMs: heartbeatMs,
              waitingFor: 'tool',
              now: this.now,
            });
          } catch (err) {
            if (!isAbortError(err)) throw err;
            result = { ok: false, output: 'interrupted: navi was stopped while this tool ran' };
          }
        }
        const toolMessage: ChatMessage = { role: 'tool', content: result.output, tool_name: call.name };
        this.addToContext(toolMessage);
        this.persist(toolMessage);
        yield {
          type: 'tool_call',
          call_id: id,
          name: call.name,
          arguments: shownArgs,
          ok: result.ok,
          duration_ms: Math.max(0, this.now() - started),
          ...capForEvent(result.output),
          iteration,
        };
      }
      const plan = this.takePlan();
      // The model already read it in the plan tool's result (planning/plan-for-turn.ts says why).
      if (plan !== null) this.persist(plan, { isPlan: true, toContext: false });
      for (const ev of this.channel.take()) yield ev;
      if (this.pendingProfile !== null) {
        const changed = this.applyProfileSwitch();
        if (changed) yield changed;
      }
      if (this.latestTodos !== null) {
        todos = this.latestTodos;
        this.latestTodos = null;
      }
      stall.observe(todoFingerprint(todos));
      if (opts.signal.aborted) {
        yield this.end('interrupted');
        return await this.finish('interrupted');
      }
    }
    yield this.end('max_iterations');
    return await this.finish('max_iterations');
  }

  /** `--output-schema`: the answer again, in the schema's shape (structured-answer.ts says why). */
  private async *structuredFinal(todos: MechanicsTodos, stalled: number): AsyncGenerator<AgentEvent, StopReason> {
    const output = this.opts.outputSchema;
    if (output === undefined) return 'completed';
    const result = yield* structuredAnswer(
      {
        ask: async function* (this: Turn, format: Record<string, unknown>, note: string | undefined) {
          this.format = format;
          try {
            return yield* this.askModel(todos, stalled, note);
          } finally {
            this.format = undefined;
          }
        }.bind(this),
        keep: (m) => {
          this.addToContext(m);
          this.persist(m);
        },
      },
      output,
    );
    if (result.kind === 'interrupted') return 'interrupted';
    this.finalText = result.text;
    if (result.kind === 'ok') {
      this.structured = { value: result.value };
      return 'completed';
    }
    this.structured = { errors: result.errors };
    this.failure = `the answer does not match --output-schema after ${STRUCTURED_ATTEMPTS} attempts: ${result.errors.join('; ')}`;
    yield { type: 'error', code: 'output_schema_mismatch', message: this.failure, iteration: this.#iteration };
    return 'model_error';
  }

  private async *autoPlan(): AsyncGenerator<AgentEvent, void> {
    yield* waitWithHeartbeat(this.services.plan(this, {}), {
      channel: this.channel,
      intervalMs: this.opts.heartbeatMs ?? HEARTBEAT_MS,
      waitingFor: 'model',
      now: this.now,
    });
    // A plan was made (not DIRECT, not failed): before the first model call, so it can go in as
    // an assistant message of its own, answered by the go-ahead.
    const plan = this.takePlan();
    if (plan === null) return;
    this.addToContext(plan);
    this.persist(plan, { isPlan: true });
    const go: ChatMessage = { role: 'user', content: 'Plan is ready. Execute it now.' };
    this.addToContext(go);
    this.persist(go);
  }

  /** The plan made since the last call, as the assistant message the display buffer shows. */
  private takePlan(): ChatMessage | null {
    const text = this.#pendingPlan;
    this.#pendingPlan = null;
    return text === null ? null : { role: 'assistant', content: text };
  }

  /** Reloads profile and tools after the batch that held switch_profile; a model change is reported. */
  private applyProfileSwitch(): AgentEvent | null {
    const next = this.deps.profiles.profiles.get(this.pendingProfile ?? '');
    this.pendingProfile = null;
    if (!next) return null;
    const previousModel = this.#model;
    this.#profile = next;
    this.#model = next.settings.model ?? this.opts.model;
    this.builder.invalidate(next.id);
    this.system = null;
    this.loadTools(capTools(this.profileTools(next), this.#toolCeiling).kept);
    return this.#model !== previousModel ? { type: 'model_info', model: this.#model, num_ctx: this.#numCtx } : null;
  }

  // ── TurnHost: called by agent-level tools while this turn runs them ──

  plan(args: { reason?: string; updated_goal?: string }): Promise<ToolResult> {
    return this.services.plan(this, args);
  }

  spawnAgent(args: SpawnArgs): Promise<ToolResult> {
    return this.services.spawn(this, args);
  }

  switchProfile(profileId: string): Promise<ToolResult> {
    const target = this.deps.profiles.profiles.get(profileId);
    if (!target) {
      const ids = [...this.deps.profiles.profiles.keys()].join(', ');
      return Promise.resolve({ ok: false, output: `unknown profile '${profileId}'; available: ${ids}` });
    }
    this.pendingProfile = profileId;
    const { dropped } = capTools(this.profileTools(target), this.#toolCeiling);
    const note = droppedToolsNote(dropped);
    if (note) this.emit({ type: 'warning', code: 'tools_dropped', message: `switch_profile: profile '${profileId}' gets no ${dropped.join(', ')} (not in the current agent's tools)` });
    return Promise.resolve({ ok: true, output: `Switched to profile '${profileId}' from the next step on${note ? `, ${note}` : ''}.` });
  }

  async remember(fact: string): Promise<ToolResult> {
    const store = await this.deps.store;
    const record = await store.memories.add(this.deps.user ?? 'local', fact.trim(), 'tool', this.toolCtx.sessionId);
    await refreshMemory(this.deps.store, this.deps.user ?? 'local', this.deps.memoryCache);
    return { ok: true, output: `Remembered (${record.id}): ${record.fact}` };
  }

  async forget(id: string): Promise<ToolResult> {
    const store = await this.deps.store;
    const removed = await store.memories.remove(this.deps.user ?? 'local', id.trim());
    if (removed) await refreshMemory(this.deps.store, this.deps.user ?? 'local', this.deps.memoryCache);
    return removed ? { ok: true, output: `Forgot ${id}.` } : { ok: false, output: `no memory with id '${id}'` };
  }

  /** Forwards an event into this turn's stream (tool side events, planning, sub-agents). */
  emit(ev: AgentEvent): void {
    // The todo list as the todo tool or the planner left it: no need to read it back.
    if (ev.type === 'todo_updated' && ev.is_subagent !== true) this.latestTodos = ev.todos;
    this.channel.push(ev);
  }
}
