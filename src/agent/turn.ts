/**
 * One agent turn, the tool loop of seed 000 steps 1–10 as an async generator of events: a thin
 * driver over steps. `start()` opens the session and the model's view; then each `step()` (one
 * model call and the tool batch it asked for) returns `continue` or an ending with its reason,
 * and the driver ends the turn in one place. The data lives in `TurnState` (turn-state.ts),
 * the model call in `ModelStep` (model-step.ts), the tools in `runToolBatch` (tool-batch.ts),
 * the agent-level tools in `TurnToolHost` (turn-host.ts). docs/architecture.md draws it.
 */
import type { ChatMessage } from '../llm/types.js';
import type { Profile } from '../profiles/types.js';
import { InvalidInputError, isNaviError } from '../errors.js';
import { splitTurnOptions, type AgentDeps, type TurnOptions, type TurnOutcome } from './agent-types.js';
import type { ContextBuilder } from './context-builder.js';
import type { AgentEvent, StopReason } from './events.js';
import { noteCarrier, StallCounter, todoFingerprint } from './mechanics.js';
import { assistantMessage, giveUpAdvice, MAX_MODEL_RETRIES, truncatedWarning, usageOf } from './model-call.js';
import { unansweredCalls } from './context-repair.js';
import { memoryMessage } from './memory.js';
import { contextTooLargeMessage, promptTooLargeMessage } from './context-size.js';
import { charsToTokens, messageChars } from './tokens.js';
import { ModelStep, type MechanicsTodos } from './model-step.js';
import { askWithinContext, type FittingOutcome } from './overflow-recovery.js';
import { runToolBatch } from './tool-batch.js';
import { TurnToolHost, type TurnServices } from './turn-host.js';
import { TurnState } from './turn-state.js';
import { waitWithHeartbeat } from './wait-with-heartbeat.js';

export { effectiveNumCtx, HEARTBEAT_MS, toolsForProfile } from './turn-state.js';
export type { TurnServices } from './turn-host.js';

/**
 * What a step leaves the driver to do (after openai-agents-js `runner/steps.ts` NextStep):
 * run another step, or end the turn. `answered`: the model gave its final answer, so the
 * post-turn work (compression, memory extraction) runs after `stream_end`.
 */
export type StepOutcome = { kind: 'continue' } | { kind: 'end'; reason: StopReason; answered?: boolean };

const CONTINUE: StepOutcome = { kind: 'continue' };

function end(reason: StopReason, answered = false): StepOutcome {
  return { kind: 'end', reason, answered };
}

export class Turn {
  readonly state: TurnState;
  private readonly host: TurnToolHost;
  private readonly model: ModelStep;
  /** The todo list the reminders see, and the stall counter over it (set in `start`). */
  private todos: MechanicsTodos = [];
  private stall = new StallCounter('');
  /** The iteration whose reminders are in the context already (put there by the step before). */
  private notedIteration = 0;

  constructor(
    deps: AgentDeps,
    opts: TurnOptions,
    builder: ContextBuilder,
    private readonly services: TurnServices,
    profile: Profile,
  ) {
    const { settings, input } = splitTurnOptions(opts);
    this.state = new TurnState(deps, settings, input, builder, profile);
    this.host = new TurnToolHost(this.state, services);
    this.state.attachHost(this.host);
    this.model = new ModelStep(this.state, (s) => services.view(s));
  }

  async *run(): AsyncGenerator<AgentEvent, TurnOutcome> {
    try {
      yield* this.start();
      for (;;) {
        const outcome = yield* this.step();
        if (outcome.kind === 'end') return yield* this.end(outcome.reason, outcome.answered === true);
      }
    } finally {
      // Whatever ended the turn (error, consumer stopping early), queued writes still land.
      await this.state.writer.flush().catch(() => undefined);
    }
  }

  /** The one ending: `stream_end`, the post-turn work after an answer, then every write landed. */
  private async *end(reason: StopReason, answered: boolean): AsyncGenerator<AgentEvent, TurnOutcome> {
    const { state } = this;
    yield {
      type: 'stream_end',
      stop_reason: reason,
      text: state.finalText,
      iterations: state.iteration,
      usage: { prompt_tokens: state.usage.promptTokens, completion_tokens: state.usage.completionTokens },
    };
    if (answered && !state.signal.aborted) {
      yield* this.compress('postturn');
      const usage = await this.services.afterTurn(state).catch(() => null);
      if (usage !== null) state.recordServiceCalls(1, usage);
    }
    await state.writer.flush();
    return {
      stopReason: reason,
      text: state.finalText,
      iterations: state.iteration,
      modelCalls: state.modelCalls,
      usage: state.usage,
      ...(state.failure !== undefined ? { error: state.failure } : {}),
      ...(state.structured !== undefined ? ('value' in state.structured ? { structured: state.structured.value } : { schemaErrors: state.structured.errors }) : {}),
    };
  }

  /** Compression when due; the driver applies what it returns. True when the context changed. */
  private async *compress(reason: 'preturn' | 'midturn' | 'postturn'): AsyncGenerator<AgentEvent, boolean> {
    const change = yield* this.services.maybeCompress(this.state, reason);
    if (change === null) return false;
    for (const ev of await this.state.applyCompression(change)) yield ev;
    return true;
  }

  /** The ending when the conversation cannot fit: `message` is the answer shown (sizes and the fix). */
  private *tooLarge(message: string, iteration: number): Generator<AgentEvent, StepOutcome> {
    const { state } = this;
    state.finalText = message;
    state.failure = message;
    state.persist({ role: 'assistant', content: message }, { toContext: false });
    yield { type: 'text_delta', text: message, iteration };
    return end('context_too_large');
  }

  private async *start(): AsyncGenerator<AgentEvent, void> {
    const { state } = this;
    const { input, settings, deps } = state;
    if (input.newSession) {
      // Stored once the model answered (released in step()): a run that cannot reach the model
      // leaves no session behind. Sub-agents' sessions are the parent's business.
      if (!state.isSubagent) state.writer.hold();
      state.writer.enqueue((s) =>
        s.sessions.create({
          id: input.sessionId,
          kind: input.kind ?? (state.isSubagent ? 'subagent' : 'chat'),
          profile: state.profile.id,
          cwd: settings.cwd,
          parentId: input.parentSessionId ?? input.subagent?.parentSessionId ?? null,
          title: input.message.split('\n')[0]?.slice(0, 200) ?? '',
          model: state.model,
        }),
      );
    } else {
      const store = await deps.store;
      state.replaceContext(await store.context.load(input.sessionId));
      for (const m of unansweredCalls(state.context)) {
        state.addToContext(m);
        state.persist(m);
      }
    }
    const sandbox = settings.shell.sandbox;
    yield {
      type: 'run_started',
      profile: state.profile.id,
      model: state.model,
      cwd: settings.cwd,
      resumed: !input.newSession,
      sandbox: sandbox?.mode ?? 'off',
      sandbox_network: sandbox?.network ?? false,
    };

    // The model's trained context length decides the effective num_ctx (unless the user set
    // one): a window the model was not trained for degrades answers, and num_ctx must not
    // change between calls (Ollama reloads the model when it does). /api/show is cheap; a
    // missing model is reported by the chat call itself, so a failure here only means no length.
    const [info, memory] = await Promise.all([
      deps.llm.showModel(state.model, input.signal).catch(() => null),
      state.isSubagent ? Promise.resolve(null) : memoryMessage(deps.store, deps.user ?? 'local', deps.memoryCache).catch(() => null),
    ]);
    state.memory = memory;
    state.system = null;
    state.fitNumCtx(info?.contextLength);
    state.contextLength = info?.contextLength;
    const capabilities = info?.capabilities;
    const warning = this.model.adoptCapabilities(capabilities);
    yield {
      type: 'model_info',
      model: state.model,
      num_ctx: state.numCtx,
      ...(info?.contextLength !== undefined ? { context_length: info.contextLength } : {}),
      ...(capabilities !== undefined ? { capabilities } : {}),
      think: state.think,
    };
    if (warning !== null) yield warning;
    if (info?.contextLength !== undefined && settings.numCtxExplicit === true && settings.numCtx > info.contextLength) {
      yield {
        type: 'warning',
        code: 'num_ctx_exceeds_model',
        message: `llm.num_ctx ${settings.numCtx} exceeds ${state.model}'s trained context length ${info.contextLength}; using ${state.numCtx} (Ollama clamps num_ctx to it)`,
      };
    }

    // A prompt larger than the window by itself is refused before anything of it is stored: a
    // new session's held writes are dropped (no session), and no model call is made. Exit 2:
    // the input cannot work with this model and settings, and asking again would not help.
    const promptTokens = charsToTokens(messageChars({ role: 'user', content: input.message }) + state.fixedRequestChars());
    if (!state.isSubagent && promptTokens > state.numCtx) {
      state.writer.discard();
      throw new InvalidInputError('prompt_too_large', promptTooLargeMessage({ estimate: promptTokens, numCtx: state.numCtx, contextLength: state.contextLength }));
    }
    if (!input.newSession) yield* this.compress('preturn');

    if (input.subagent?.contextTransfer) {
      state.addToContext({ role: 'user', content: `Context from the agent that started you:\n${input.subagent.contextTransfer}` });
      state.addToContext({ role: 'assistant', content: 'Understood.' });
    }
    const userMessage: ChatMessage = { role: 'user', content: input.message };
    state.taskMessage = userMessage;
    state.addToContext(userMessage);
    state.persist(userMessage);

    if (input.subagent?.autoPlan) yield* this.autoPlan();
    this.todos = input.newSession ? [] : await (await deps.store).state.getTodos(input.sessionId).catch(() => []);
    this.stall = new StallCounter(todoFingerprint(this.todos));
  }

  /** One iteration: the model call (after earlier writes and a due compression), then its tools. */
  private async *step(): AsyncGenerator<AgentEvent, StepOutcome> {
    const { state } = this;
    const { signal } = state;
    if (state.iteration >= state.maxIterations) return end('max_iterations');
    if (signal.aborted) return end('interrupted');
    state.iteration++;
    const iteration = state.iteration;
    // Earlier iterations' writes are already under way (queued as they happened). They overlap
    // the model's prefill instead of delaying the request, and must have landed before
    // anything of this answer is stored or acted on: a crash loses no more than before (the
    // writes in flight), and a failed write stops the turn before a tool runs.
    let durable: Promise<void> | null = null;
    if (iteration > 1) {
      yield* this.compress('midturn');
      durable = state.writer.flush();
      durable.catch(() => undefined); // awaited below; not unhandled meanwhile
    }

    // This call's reminders, unless the step before put them into its last tool result.
    if (this.notedIteration !== iteration) this.note(this.model.notesFor(iteration, this.todos, this.stall.count), null);

    const estimate = state.estimate();
    if (estimate > state.contextBudget) {
      const neverFit = iteration === 1 && state.input.newSession;
      const sizes = { estimate, numCtx: state.numCtx, contextLength: state.contextLength, serverWindow: state.contextBudget };
      return yield* this.tooLarge(contextTooLargeMessage(sizes, neverFit), iteration);
    }

    let fitting: FittingOutcome;
    try {
      // A refusal for size (ContextOverflowError) is compressed and asked again (overflow-recovery.ts).
      fitting = yield* askWithinContext(state, { ask: () => this.model.ask(), compress: () => this.compress('midturn') });
    } catch (err) {
      // The model never answered (unreachable, not pulled, refused the request): a new
      // session's writes, still held, are dropped. Anything else keeps them (flushed on the way out).
      if (isNaviError(err) && (err.status === 'llm_unavailable' || err.status === 'invalid_input')) state.writer.discard();
      // A database that failed meanwhile is the cause to report, not what it did to the call.
      state.writer.throwIfFailed();
      throw err;
    }
    // The new session's first writes (the session itself, the task) were held until the model
    // answered; they go out now. A tool that writes to the store itself, referring to the session
    // (remember, todo, scratchpad, spawn_agent), waits for them first (TurnState.writesLanded;
    // issue 18 item 5: "Session … does not exist" from a first-call remember); the others (read a
    // file, run a command) overlap a store still opening.
    state.writer.release();
    if (fitting.kind === 'too_large') return yield* this.tooLarge(fitting.message, iteration);
    const { outcome } = fitting;
    const { reply } = outcome;
    if (outcome.kind === 'interrupted' || signal.aborted) {
      // Keep what was streamed: a stopped turn still shows its partial answer.
      if (reply.content.length > 0 || reply.thinking.length > 0) {
        state.finalText = reply.content;
        // Without calls: none of them ran, and a resumed session must not replay them.
        state.persist(assistantMessage({ ...reply, calls: [] }, iteration), { toContext: reply.content.length > 0, ...usageOf(reply) });
      }
      return end('interrupted');
    }
    await durable;
    if (outcome.kind === 'mistake') {
      state.failure = `${outcome.detail}, ${MAX_MODEL_RETRIES + 1} times in a row; ${giveUpAdvice(outcome.mistake)}`;
      yield { type: 'error', code: outcome.mistake, message: state.failure, iteration };
      return end('model_error');
    }

    const assistant = assistantMessage(reply, iteration);
    // Sent back whole — content, tool calls and thinking (ollama-mapping.ts says why).
    state.addToContext(assistant);
    state.persist(assistant, usageOf(reply));
    const truncated = reply.doneReason === 'length';
    if (truncated) yield truncatedWarning(state.model, reply, iteration);

    if (reply.calls.length === 0) {
      state.finalText = reply.content;
      if (truncated) state.failure = `the answer of model ${state.model} was cut off at its output limit (done_reason "length")`;
      let reason: StopReason = truncated ? 'truncated' : 'completed';
      if (reason === 'completed' && state.input.outputSchema !== undefined && !signal.aborted) reason = yield* this.model.structuredFinal();
      return end(reason, true);
    }

    const last = yield* runToolBatch(state, assistant, iteration);
    yield* this.afterBatch(last);
    return signal.aborted ? end('interrupted') : CONTINUE;
  }

  /**
   * What the tool batch left for after it: side events, a profile switch, the todo list, the
   * last tool result (carrying the next call's reminders), the plan to show.
   */
  private *afterBatch(last: ChatMessage | null): Generator<AgentEvent, void> {
    const { state } = this;
    for (const ev of state.channel.take()) yield ev;
    if (state.pendingProfile !== null) {
      const changed = this.host.applyProfileSwitch();
      if (changed) yield changed;
    }
    if (state.latestTodos !== null) {
      this.todos = state.latestTodos;
      state.latestTodos = null;
    }
    this.stall.observe(todoFingerprint(this.todos));
    const next = state.iteration + 1;
    if (next <= state.maxIterations && !state.signal.aborted) {
      this.note(this.model.notesFor(next, this.todos, this.stall.count), last);
      this.notedIteration = next;
    } else if (last !== null) {
      state.addToContext(last);
      state.persist(last);
    }
    const plan = state.takePlan();
    // The model already read it in the plan tool's result (planning/plan-for-turn.ts says why).
    if (plan !== null) state.persist(plan, { isPlan: true, toContext: false });
  }

  /**
   * Puts reminders into the context for good (stored too): appended to `last`, the tool result
   * not yet added, or as a trailing user message. Once sent they stay (mechanics.ts says why).
   */
  private note(notes: string[], last: ChatMessage | null): void {
    const { state } = this;
    const carrier = noteCarrier(last ?? undefined, notes);
    const message = carrier === null ? last : 'replaceLast' in carrier ? carrier.replaceLast : null;
    if (message !== null) {
      state.addToContext(message);
      state.persist(message);
    }
    if (carrier !== null && 'append' in carrier) {
      state.addToContext(carrier.append);
      state.persist(carrier.append);
    }
  }

  /** A sub-agent's plan before its first model call (`subagent_planning_enabled`). */
  private async *autoPlan(): AsyncGenerator<AgentEvent, void> {
    const { state } = this;
    yield* waitWithHeartbeat(this.host.plan({}), { channel: state.channel, intervalMs: state.heartbeatMs, waitingFor: 'model', now: state.now });
    // A plan was made (not DIRECT, not failed): before the first model call, so it can go in as
    // an assistant message of its own, answered by the go-ahead.
    const plan = state.takePlan();
    if (plan === null) return;
    state.addToContext(plan);
    state.persist(plan, { isPlan: true });
    const go: ChatMessage = { role: 'user', content: 'Plan is ready. Execute it now.' };
    state.addToContext(go);
    state.persist(go);
  }
}
