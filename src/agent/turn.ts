/**
 * One agent turn: the tool loop of seed 000 steps 1–10 as an async generator of events.
 * Holds the turn's mutable state (context, profile, counters) and implements the TurnHost
 * that agent-level tools (plan, spawn_agent, switch_profile, remember, forget) call back into.
 */
import type { ChatMessage, ChatUsage, ToolCallRequest, ToolSchema } from '../llm/types.js';
import type { Profile } from '../profiles/types.js';
import type { Store } from '../store/types.js';
import type { TodoItem, ToolContext, ToolResult } from '../tools/types.js';
import { isAbortError } from '../errors.js';
import type { AgentDeps, TurnOptions, TurnOutcome } from './agent-types.js';
import type { ContextBuilder } from './context-builder.js';
import type { AgentEvent, StopReason } from './events.js';
import { StallCounter, todoFingerprint, transientMessages } from './mechanics.js';
import { unansweredCalls } from './context-repair.js';
import { memoryMessage, refreshMemory } from './memory.js';
import type { SpawnArgs, TurnHost } from './run-context.js';
import { SerialWriter } from './serial-writer.js';
import { estimateTokens, messageChars } from './tokens.js';
import { capTools, droppedToolsNote } from './tool-ceiling.js';
import { EventChannel, waitWithHeartbeat } from './wait-with-heartbeat.js';

/** Silence after which a heartbeat event is emitted (SPEC §4). */
export const HEARTBEAT_MS = 15_000;
/** Tool output shown in a `tool_call` event; the model still gets the registry's larger cap. */
export const EVENT_OUTPUT_CHARS = 16_384;

/** num_ctx to send: the configured one, lowered to the model's context length when not explicit. */
export function effectiveNumCtx(configured: number, explicit: boolean, contextLength: number | undefined): number {
  if (explicit || contextLength === undefined || contextLength <= 0) return configured;
  return Math.min(configured, contextLength);
}

/**
 * Tools the profile may call that exist in the registry, in profile order, then the project's
 * user tools unless the profile opts out (`user_tools_enabled: false`).
 */
export function toolsForProfile(profile: Profile, has: (name: string) => boolean, subagent = false, userTools: readonly string[] = []): string[] {
  const { agent, subagent: sub } = profile.settings.tools;
  const wanted = subagent && sub.length > 0 ? sub : agent;
  const names = wanted.filter(has);
  if (profile.settings.user_tools_enabled) for (const t of userTools) if (!names.includes(t)) names.push(t);
  return names;
}

function callId(iteration: number, index: number, call: ToolCallRequest): string {
  return call.id && call.id.length > 0 ? call.id : `call_${iteration}_${index}`;
}

function capForEvent(text: string): { output: string; truncated: boolean } {
  if (text.length <= EVENT_OUTPUT_CHARS) return { output: text, truncated: false };
  const half = EVENT_OUTPUT_CHARS / 2;
  return { output: `${text.slice(0, half)}\n[… ${text.length - EVENT_OUTPUT_CHARS} chars omitted …]\n${text.slice(-half)}`, truncated: true };
}

/** Longest string argument shown whole in `tool_started` / `tool_call` events. */
const EVENT_ARG_CHARS = 4_096;

/**
 * Tool arguments for an event: long strings (a `write_file` with megabytes of content) are
 * shortened head + tail, so one call cannot make the event stream megabytes long. The model
 * and the database keep the arguments whole.
 */
export function capArgsForEvent(args: unknown): unknown {
  if (typeof args === 'string') {
    if (args.length <= EVENT_ARG_CHARS) return args;
    const half = EVENT_ARG_CHARS / 2;
    return `${args.slice(0, half)}[… ${args.length - EVENT_ARG_CHARS} chars omitted …]${args.slice(-half)}`;
  }
  if (Array.isArray(args)) return args.map(capArgsForEvent);
  if (typeof args === 'object' && args !== null) {
    return Object.fromEntries(Object.entries(args).map(([k, v]) => [k, capArgsForEvent(v)]));
  }
  return args;
}

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
  readonly usage: ChatUsage = { promptTokens: 0, completionTokens: 0 };
  /** The model's view for this turn (stored context + what this turn added). */
  readonly context: ChatMessage[] = [];
  modelCalls = 0;
  iteration = 0;
  numCtx: number;
  profile: Profile;
  model: string;
  toolNames: string[] = [];
  /**
   * The most this agent may ever hold: its profile's tools (capped by the agent that started
   * it) minus exclusions. Sub-agents and profile switches get at most these (`tool-ceiling.ts`).
   */
  toolCeiling: string[] = [];
  schemas: ToolSchema[] = [];
  /** Messages to append after the current tool batch's results (an injected plan). */
  readonly pendingAfterBatch: ChatMessage[] = [];
  /** Real prompt tokens of the last call, and chars added since (token estimate). */
  baseline: number | null = null;
  charsSinceBaseline = 0;
  totalChars = 0;
  private pendingProfile: string | null = null;
  /** Set by a `todo_updated` event of this turn; consumed after the tool batch. */
  private latestTodos: TodoItem[] | null = null;
  private memory: ChatMessage | null = null;
  private allowed = new Set<string>();
  private schemaChars = 0;
  private finalText = '';
  readonly toolCtx: ToolContext;
  readonly now: () => number;

  constructor(
    readonly deps: AgentDeps,
    readonly opts: TurnOptions,
    readonly builder: ContextBuilder,
    private readonly services: TurnServices,
    profile: Profile,
  ) {
    this.profile = profile;
    this.model = profile.settings.model ?? opts.model;
    this.numCtx = opts.numCtx;
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
    this.loadTools(opts.subagent?.toolNames ?? this.profileTools(profile));
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
    return this.opts.maxIterations ?? this.profile.settings.max_iterations;
  }

  store(): Promise<Store> {
    return this.deps.store;
  }

  /** The profile's tools as this agent would get them (agent or sub-agent list, user tools). */
  private profileTools(profile: Profile): string[] {
    return toolsForProfile(profile, (n) => this.deps.tools.has(n), this.isSubagent, this.deps.userTools);
  }

  private loadTools(base: readonly string[]): void {
    const excluded = new Set(this.opts.subagent?.excludeTools ?? []);
    this.toolCeiling = base.filter((n) => !excluded.has(n));
    const names = this.profile.settings.planning_enabled ? [...this.toolCeiling] : this.toolCeiling.filter((n) => n !== 'plan');
    for (const extra of this.opts.extraTools ?? []) if (this.deps.tools.has(extra) && !names.includes(extra)) names.push(extra);
    this.toolNames = names;
    this.allowed = new Set(names);
    this.schemas = this.deps.tools.schemas(names);
    this.schemaChars = JSON.stringify(this.schemas).length;
    this.toolCtx.stepValidation = this.profile.settings.step_validation_enabled;
  }

  systemPrompt(): string {
    return this.opts.subagent?.systemPrompt ?? this.builder.systemPrompt(this.profile.id);
  }

  /** Appends to the model's view (and the token estimate); storage is the caller's job. */
  addToContext(m: ChatMessage): void {
    this.context.push(m);
    const c = messageChars(m);
    this.totalChars += c;
    this.charsSinceBaseline += c;
  }

  /** Replaces the model's view (after compression) and restarts the estimate from it. */
  replaceContext(messages: ChatMessage[]): void {
    this.context.length = 0;
    this.context.push(...messages);
    this.totalChars = messages.reduce((n, m) => n + messageChars(m), 0);
    this.baseline = null;
    this.charsSinceBaseline = this.totalChars;
  }

  /** Characters every request carries besides the context: system prompt, memory, tool schemas. */
  fixedRequestChars(): number {
    return this.systemPrompt().length + (this.memory?.content.length ?? 0) + this.schemaChars;
  }

  /** Estimated prompt tokens of the next request (system prompt and tool schemas included). */
  estimate(): number {
    return estimateTokens({ baseline: this.baseline, charsSinceBaseline: this.charsSinceBaseline, totalChars: this.totalChars + this.fixedRequestChars() });
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
      iterations: this.iteration,
      usage: { prompt_tokens: this.usage.promptTokens, completion_tokens: this.usage.completionTokens },
    };
  }

  private async finish(stopReason: StopReason): Promise<TurnOutcome> {
    await this.writer.flush();
    return { stopReason, text: this.finalText, iterations: this.iteration, modelCalls: this.modelCalls, usage: this.usage };
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
      this.writer.enqueue((s) =>
        s.sessions.create({
          id: opts.sessionId,
          kind: opts.kind ?? (this.isSubagent ? 'subagent' : 'chat'),
          profile: this.profile.id,
          cwd: opts.cwd,
          parentId: opts.parentSessionId ?? opts.subagent?.parentSessionId ?? null,
          title: opts.message.split('\n')[0]?.slice(0, 200) ?? '',
          model: this.model,
        }),
      );
    } else {
      const store = await this.deps.store;
      this.replaceContext(await store.context.load(opts.sessionId));
      for (const m of unansweredCalls(this.context)) {
        this.addToContext(m);
        this.persist(m);
      }
    }
    yield { type: 'run_started', profile: this.profile.id, model: this.model, cwd: opts.cwd, resumed: !opts.newSession };

    // The model's trained context length decides the effective num_ctx (unless the user set
    // one): a window the model was not trained for degrades answers, and num_ctx must not
    // change between calls (Ollama reloads the model when it does). /api/show is cheap; a
    // missing model is reported by the chat call itself, so a failure here only means no length.
    const [info, memory] = await Promise.all([
      this.deps.llm.showModel(this.model, opts.signal).catch(() => null),
      this.isSubagent ? Promise.resolve(null) : memoryMessage(this.deps.store, this.deps.user ?? 'local', this.deps.memoryCache).catch(() => null),
    ]);
    this.memory = memory;
    this.numCtx = effectiveNumCtx(opts.numCtx, opts.numCtxExplicit ?? true, info?.contextLength);
    yield {
      type: 'model_info',
      model: this.model,
      num_ctx: this.numCtx,
      ...(info?.contextLength !== undefined ? { context_length: info.contextLength } : {}),
    };
    if (info?.contextLength !== undefined && this.numCtx > info.contextLength) {
      yield {
        type: 'warning',
        code: 'num_ctx_exceeds_model',
        message: `llm.num_ctx ${this.numCtx} exceeds ${this.model}'s trained context length ${info.contextLength}; answers may degrade past it`,
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

  /** The request for the next model call: system, memory, context, then transient messages. */
  buildRequest(todos: Parameters<typeof transientMessages>[0]['todos'], stalled: number): ChatMessage[] {
    const p = this.profile.settings;
    const transient = transientMessages({
      settings: {
        iterationBudget: p.iteration_budget_enabled,
        goalAnchoring: p.goal_anchoring_enabled,
        goalInterval: p.goal_anchoring_interval,
        antiStall: p.anti_stall_enabled,
        antiStallThreshold: p.anti_stall_threshold,
      },
      iteration: this.iteration,
      maxIterations: this.maxIterations,
      task: this.task,
      todos,
      stalledIterations: stalled,
    });
    const head: ChatMessage[] = [{ role: 'system', content: this.systemPrompt() }];
    if (this.memory) head.push(this.memory);
    const view = this.services.view(this);
    // One array of the final size: a long history is not pushed message by message on every call.
    return head.concat(view.some((m) => m.role === 'system') ? view.filter((m) => m.role !== 'system') : view, transient);
  }

  private async *loop(): AsyncGenerator<AgentEvent, TurnOutcome> {
    const { opts } = this;
    const { llm, tools } = this.deps;
    const heartbeatMs = opts.heartbeatMs ?? HEARTBEAT_MS;
    yield* this.start();
    if (this.opts.subagent?.autoPlan) yield* this.autoPlan();

    const todosNow = async (): Promise<Awaited<ReturnType<Store['state']['getTodos']>>> =>
      (await this.deps.store).state.getTodos(this.opts.sessionId).catch(() => []);
    let todos = opts.newSession ? [] : await todosNow();
    const stall = new StallCounter(todoFingerprint(todos));

    while (this.iteration < this.maxIterations) {
      if (opts.signal.aborted) {
        yield this.end('interrupted');
        return await this.finish('interrupted');
      }
      this.iteration++;
      const iteration = this.iteration;
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

      const request = this.buildRequest(todos, stall.count);
      const estimate = this.estimate();
      if (estimate > this.numCtx) {
        this.finalText =
          `The conversation no longer fits the model's context window (about ${estimate} tokens, num_ctx ${this.numCtx}). ` +
          'Start a new session, or raise llm.num_ctx if the model supports it.';
        this.persist({ role: 'assistant', content: this.finalText }, { toContext: false });
        yield { type: 'text_delta', text: this.finalText, iteration };
        yield this.end('context_too_large');
        return await this.finish('context_too_large');
      }

      // A store that failed to open (locked, unreachable) ends the run before a model call.
      this.writer.throwIfFailed();
      const stream = llm.chatStream({
        model: this.model,
        messages: request,
        tools: this.schemas.length > 0 ? this.schemas : undefined,
        think: opts.think && this.profile.settings.think_enabled,
        numCtx: this.numCtx,
        temperature: this.profile.settings.temperature ?? opts.temperature,
        keepAlive: opts.keepAlive,
        signal: opts.signal,
      });
      this.modelCalls++;
      let content = '';
      let thinking = '';
      let thinkingEnded = false;
      let callUsage: ChatUsage | undefined;
      const calls: ToolCallRequest[] = [];
      const iterator = stream[Symbol.asyncIterator]();
      try {
        for (;;) {
          const step = yield* waitWithHeartbeat(iterator.next(), { channel: this.channel, intervalMs: heartbeatMs, waitingFor: 'model', now: this.now });
          if (step.done) break;
          const chunk = step.value;
          switch (chunk.type) {
            case 'thinking':
              thinking += chunk.text;
              yield { type: 'thinking_delta', text: chunk.text, iteration };
              break;
            case 'text':
              if (thinking.length > 0 && !thinkingEnded) {
                thinkingEnded = true;
                yield { type: 'thinking_end', chars: thinking.length, iteration };
              }
              content += chunk.text;
              yield { type: 'text_delta', text: chunk.text, iteration };
              break;
            case 'tool_calls':
              calls.push(...chunk.calls);
              break;
            case 'done': {
              const { promptTokens, completionTokens } = chunk.usage;
              this.usage.promptTokens += promptTokens;
              this.usage.completionTokens += completionTokens;
              if (promptTokens > 0) {
                this.baseline = promptTokens;
                this.charsSinceBaseline = 0;
              }
              callUsage = { promptTokens, completionTokens };
              break;
            }
            default: {
              const never: never = chunk;
              void never;
            }
          }
        }
      } catch (err) {
        if (isAbortError(err) || opts.signal.aborted) {
          // Keep what was streamed: a stopped turn still shows its partial answer.
          if (content.length > 0 || thinking.length > 0) {
            this.finalText = content;
            this.persist({ role: 'assistant', content, ...(thinking ? { thinking } : {}) }, { toContext: content.length > 0, ...(callUsage ? { usage: callUsage } : {}) });
          }
          yield this.end('interrupted');
          return await this.finish('interrupted');
        }
        // A database that failed meanwhile is the cause to report, not what it did to the call.
        this.writer.throwIfFailed();
        throw err;
      } finally {
        await iterator.return?.();
      }
      await durable;
      if (thinking.length > 0 && !thinkingEnded) yield { type: 'thinking_end', chars: thinking.length, iteration };

      const assistant: ChatMessage = {
        role: 'assistant',
        content,
        ...(thinking ? { thinking } : {}),
        ...(calls.length > 0 ? { tool_calls: calls.map((c, i) => ({ ...c, id: callId(iteration, i, c) })) } : {}),
      };
      // The model's view never carries reasoning back (Ollama ignores it; it only costs bytes).
      const { thinking: _omit, ...forContext } = assistant;
      this.addToContext(forContext);
      this.persist(assistant, callUsage ? { usage: callUsage } : {});

      if (calls.length === 0) {
        this.finalText = content;
        yield this.end('completed');
        if (!opts.signal.aborted) {
          yield* this.services.maybeCompress(this, 'postturn');
          await this.services.afterTurn(this).catch(() => undefined);
        }
        return await this.finish('completed');
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
      for (const m of this.pendingAfterBatch.splice(0)) {
        this.addToContext(m);
        this.persist(m, { isPlan: true });
      }
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

  private async *autoPlan(): AsyncGenerator<AgentEvent, void> {
    const result = yield* waitWithHeartbeat(this.services.plan(this, {}), {
      channel: this.channel,
      intervalMs: this.opts.heartbeatMs ?? HEARTBEAT_MS,
      waitingFor: 'model',
      now: this.now,
    });
    for (const m of this.pendingAfterBatch.splice(0)) {
      this.addToContext(m);
      this.persist(m, { isPlan: true });
    }
    if (result.ok && !result.output.startsWith('DIRECT')) {
      const go: ChatMessage = { role: 'user', content: 'Plan is ready. Execute it now.' };
      this.addToContext(go);
      this.persist(go);
    }
  }

  /** Reloads profile and tools after the batch that held switch_profile; a model change is reported. */
  private applyProfileSwitch(): AgentEvent | null {
    const next = this.deps.profiles.profiles.get(this.pendingProfile ?? '');
    this.pendingProfile = null;
    if (!next) return null;
    const previousModel = this.model;
    this.profile = next;
    this.model = next.settings.model ?? this.opts.model;
    this.builder.invalidate(next.id);
    this.loadTools(capTools(this.profileTools(next), this.toolCeiling).kept);
    return this.model !== previousModel ? { type: 'model_info', model: this.model, num_ctx: this.numCtx } : null;
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
    const { dropped } = capTools(this.profileTools(target), this.toolCeiling);
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
