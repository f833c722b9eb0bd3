/**
 * The agent core: one turn = the tool loop of seed 000 as an async generator of typed events.
 * The CLI renders the events; outcomes (completed, max iterations, interrupted, context too
 * large) arrive in the final `stream_end` event and the generator's return value. Failures
 * the user must act on (Ollama unavailable, storage) are thrown as NaviErrors after
 * everything already produced has been saved.
 */
import type { ChatMessage, ChatUsage, LlmClient, ToolCallRequest } from '../llm/types.js';
import type { ProfileSet, Profile } from '../profiles/types.js';
import type { SessionKind, Store } from '../store/types.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { ShellPolicy, ToolContext, ToolResult } from '../tools/types.js';
import { isAbortError, NotFoundError } from '../errors.js';
import { ContextBuilder } from './context-builder.js';
import type { AgentEvent, StopReason } from './events.js';
import { SerialWriter } from './serial-writer.js';
import { estimateTokens, messageChars } from './tokens.js';
import { EventChannel, waitWithHeartbeat } from './wait-with-heartbeat.js';
import { runWithContext } from './run-context.js';

/** Silence after which a heartbeat event is emitted (SPEC §4). */
export const HEARTBEAT_MS = 15_000;
/** Tool output shown in a `tool_call` event; the model still gets the registry's larger cap. */
export const EVENT_OUTPUT_CHARS = 16_384;
/** Tools that later issues add; a profile may list them before they exist. */
const RESERVED_TOOLS = new Set(['plan', 'spawn_agent', 'switch_profile', 'remember', 'forget', 'loop_signal']);

export interface AgentDeps {
  llm: LlmClient;
  /** May still be opening: PGlite opens in parallel with the first model call. */
  store: Promise<Store>;
  tools: ToolRegistry;
  profiles: ProfileSet;
  now?: () => number;
}

export interface TurnOptions {
  sessionId: string;
  /** Create the session (true) or continue it, loading its context (false). */
  newSession: boolean;
  message: string;
  profileId: string;
  /** Configured model; a profile's `model` overrides it. */
  model: string;
  cwd: string;
  numCtx: number;
  /** The user set num_ctx; otherwise it is lowered to the model's trained context length. */
  numCtxExplicit?: boolean;
  think: boolean;
  keepAlive: string;
  temperature?: number;
  /** Caps tool-loop iterations (else the profile's `max_iterations`). */
  maxIterations?: number;
  signal: AbortSignal;
  interactive: boolean;
  shell: ShellPolicy;
  redact: (text: string) => string;
  heartbeatMs?: number;
  kind?: SessionKind;
  parentSessionId?: string | null;
}

export interface TurnOutcome {
  stopReason: StopReason;
  text: string;
  iterations: number;
  /** Model calls made. */
  modelCalls: number;
  usage: ChatUsage;
}

/** num_ctx to send: the configured one, lowered to the model's context length when not explicit. */
export function effectiveNumCtx(configured: number, explicit: boolean, contextLength: number | undefined): number {
  if (explicit || contextLength === undefined || contextLength <= 0) return configured;
  return Math.min(configured, contextLength);
}

/** Tools the profile may call that actually exist, in profile order. */
export function toolsForProfile(profile: Profile, registry: ToolRegistry, subagent = false): string[] {
  const wanted = subagent && profile.settings.tools.subagent.length > 0 ? profile.settings.tools.subagent : profile.settings.tools.agent;
  return wanted.filter((name) => registry.has(name));
}

/** Unknown tool names in a profile (excluding tools that later features provide). */
export function unknownProfileTools(profile: Profile, registry: ToolRegistry): string[] {
  const all = [...profile.settings.tools.agent, ...profile.settings.tools.subagent];
  return [...new Set(all.filter((n) => !registry.has(n) && !RESERVED_TOOLS.has(n)))];
}

function callId(iteration: number, index: number, call: ToolCallRequest): string {
  return call.id && call.id.length > 0 ? call.id : `call_${iteration}_${index}`;
}

function capForEvent(text: string): { output: string; truncated: boolean } {
  if (text.length <= EVENT_OUTPUT_CHARS) return { output: text, truncated: false };
  const half = EVENT_OUTPUT_CHARS / 2;
  return { output: `${text.slice(0, half)}\n[… ${text.length - EVENT_OUTPUT_CHARS} chars omitted …]\n${text.slice(-half)}`, truncated: true };
}

export class Agent {
  private readonly builder: ContextBuilder;

  constructor(private readonly deps: AgentDeps) {
    this.builder = new ContextBuilder(deps.profiles);
  }

  /** Runs one turn and returns only the final text. */
  async run(opts: TurnOptions): Promise<string> {
    const gen = this.runStream(opts);
    for (;;) {
      const step = await gen.next();
      if (step.done) return step.value.text;
    }
  }

  runStream(opts: TurnOptions): AsyncGenerator<AgentEvent, TurnOutcome> {
    const profile = this.deps.profiles.profiles.get(opts.profileId);
    if (!profile) throw new NotFoundError('profile_not_found', `unknown profile '${opts.profileId}'`);
    const model = profile.settings.model ?? opts.model;
    const ctx = { sessionId: opts.sessionId, model, cwd: opts.cwd, user: 'local', agentPath: [profile.id] };
    // Bind the per-run context to every step of the generator, so tools see it.
    const inner = this.turn(opts, profile, model);
    return {
      next: (...args: [] | [unknown]) => runWithContext(ctx, () => inner.next(...args)),
      return: (value: TurnOutcome | PromiseLike<TurnOutcome>) => runWithContext(ctx, () => inner.return(value)),
      throw: (err: unknown) => runWithContext(ctx, () => inner.throw(err)),
      [Symbol.asyncIterator]() {
        return this;
      },
    } as AsyncGenerator<AgentEvent, TurnOutcome>;
  }

  private async *turn(opts: TurnOptions, initialProfile: Profile, model: string): AsyncGenerator<AgentEvent, TurnOutcome> {
    const { llm, tools } = this.deps;
    const now = this.deps.now ?? Date.now;
    const heartbeatMs = opts.heartbeatMs ?? HEARTBEAT_MS;
    const writer = new SerialWriter(this.deps.store);
    const channel = new EventChannel();
    const profile = initialProfile;
    const usage: ChatUsage = { promptTokens: 0, completionTokens: 0 };
    let modelCalls = 0;

    // Context: a continued session loads its stored view first; a new one starts empty and
    // does not wait for the store to open.
    const context: ChatMessage[] = [];
    if (opts.newSession) {
      writer.enqueue((s) =>
        s.sessions.create({
          id: opts.sessionId,
          kind: opts.kind ?? 'chat',
          profile: profile.id,
          cwd: opts.cwd,
          parentId: opts.parentSessionId ?? null,
          title: opts.message.split('\n')[0]?.slice(0, 200) ?? '',
          model,
        }),
      );
    } else {
      const store = await this.deps.store;
      context.push(...(await store.context.load(opts.sessionId)));
    }

    yield { type: 'run_started', profile: profile.id, model, cwd: opts.cwd, resumed: !opts.newSession };

    const userMessage: ChatMessage = { role: 'user', content: opts.message };
    context.push(userMessage);
    writer.enqueue((s) => s.messages.append(opts.sessionId, userMessage));

    const toolNames = toolsForProfile(profile, tools);
    const allowed = new Set(toolNames);
    const schemas = tools.schemas(toolNames);
    const schemaChars = JSON.stringify(schemas).length;
    const maxIterations = opts.maxIterations ?? profile.settings.max_iterations;

    const toolCtx: ToolContext = {
      cwd: opts.cwd,
      sessionId: opts.sessionId,
      signal: opts.signal,
      state: {
        getTodos: async (id) => (await this.deps.store).state.getTodos(id),
        setTodos: async (id, items) => (await this.deps.store).state.setTodos(id, items),
        getScratchpad: async (id) => (await this.deps.store).state.getScratchpad(id),
        setScratchpad: async (id, entries) => (await this.deps.store).state.setScratchpad(id, entries),
      },
      shell: opts.shell,
      redact: opts.redact,
      emit: (ev) => channel.push(ev),
      interactive: opts.interactive,
      stepValidation: profile.settings.step_validation_enabled,
    };

    // The model's trained context length decides the effective num_ctx (unless the user set
    // one): a window the model was not trained for degrades answers, and num_ctx must not
    // change between calls (Ollama reloads the model when it does). /api/show is cheap.
    // A missing model is reported by the chat call itself, so a failure here only means
    // no context length.
    const info = await llm.showModel(model, opts.signal).catch(() => null);
    const numCtx = effectiveNumCtx(opts.numCtx, opts.numCtxExplicit ?? true, info?.contextLength);
    yield {
      type: 'model_info',
      model,
      num_ctx: numCtx,
      ...(info?.contextLength !== undefined ? { context_length: info.contextLength } : {}),
    };
    if (info?.contextLength !== undefined && numCtx > info.contextLength) {
      yield {
        type: 'warning',
        code: 'num_ctx_exceeds_model',
        message: `llm.num_ctx ${numCtx} exceeds ${model}'s trained context length ${info.contextLength}; answers may degrade past it`,
      };
    }

    let baseline: number | null = null;
    let charsSinceBaseline = 0;
    let totalChars = context.reduce((n, m) => n + messageChars(m), 0);
    const addToContext = (m: ChatMessage): void => {
      context.push(m);
      const c = messageChars(m);
      totalChars += c;
      charsSinceBaseline += c;
    };
    charsSinceBaseline = totalChars;

    let finalText = '';
    let iteration = 0;
    const finish = async (stopReason: StopReason): Promise<TurnOutcome> => {
      await writer.flush();
      return { stopReason, text: finalText, iterations: iteration, modelCalls, usage };
    };
    const end = (stopReason: StopReason): AgentEvent => ({
      type: 'stream_end',
      stop_reason: stopReason,
      text: finalText,
      iterations: iteration,
      usage: { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens },
    });

    try {
      while (iteration < maxIterations) {
        if (opts.signal.aborted) {
          yield end('interrupted');
          return await finish('interrupted');
        }
        iteration++;
        // Everything from earlier iterations is durable before the model sees it.
        if (iteration > 1) await writer.flush();

        const request = this.builder.build(profile.id, context);
        const systemChars = request[0]?.content.length ?? 0;
        const estimate = estimateTokens({ baseline, charsSinceBaseline, totalChars: totalChars + systemChars + schemaChars });
        if (estimate > numCtx) {
          finalText =
            `The conversation no longer fits the model's context window (about ${estimate} tokens, num_ctx ${numCtx}). ` +
            'Start a new session, or raise llm.num_ctx if the model supports it.';
          const note: ChatMessage = { role: 'assistant', content: finalText };
          writer.enqueue((s) => s.messages.append(opts.sessionId, note, { toContext: false }));
          yield { type: 'text_delta', text: finalText, iteration };
          yield end('context_too_large');
          return await finish('context_too_large');
        }

        const stream = llm.chatStream({
          model,
          messages: request,
          tools: schemas.length > 0 ? schemas : undefined,
          think: opts.think && profile.settings.think_enabled,
          numCtx,
          temperature: profile.settings.temperature ?? opts.temperature,
          keepAlive: opts.keepAlive,
          signal: opts.signal,
        });
        modelCalls++;
        let content = '';
        let thinking = '';
        let thinkingEnded = false;
        const calls: ToolCallRequest[] = [];
        const iterator = stream[Symbol.asyncIterator]();
        try {
          for (;;) {
            const step = yield* waitWithHeartbeat(iterator.next(), { channel, intervalMs: heartbeatMs, waitingFor: 'model', now });
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
              case 'done':
                usage.promptTokens += chunk.usage.promptTokens;
                usage.completionTokens += chunk.usage.completionTokens;
                if (chunk.usage.promptTokens > 0) {
                  baseline = chunk.usage.promptTokens;
                  charsSinceBaseline = 0;
                }
                writer.enqueue((s) => s.sessions.addUsage(opts.sessionId, chunk.usage.promptTokens, chunk.usage.completionTokens));
                break;
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
              const partial: ChatMessage = { role: 'assistant', content, ...(thinking ? { thinking } : {}) };
              finalText = content;
              writer.enqueue((s) => s.messages.append(opts.sessionId, partial, { toContext: content.length > 0 }));
            }
            yield end('interrupted');
            return await finish('interrupted');
          }
          throw err;
        } finally {
          await iterator.return?.();
        }
        if (thinking.length > 0 && !thinkingEnded) yield { type: 'thinking_end', chars: thinking.length, iteration };

        const assistant: ChatMessage = {
          role: 'assistant',
          content,
          ...(thinking ? { thinking } : {}),
          ...(calls.length > 0 ? { tool_calls: calls.map((c, i) => ({ ...c, id: callId(iteration, i, c) })) } : {}),
        };
        addToContext(assistant);
        writer.enqueue((s) => s.messages.append(opts.sessionId, assistant));

        if (calls.length === 0) {
          finalText = content;
          yield end('completed');
          return await finish('completed');
        }

        for (const [index, call] of (assistant.tool_calls ?? []).entries()) {
          const id = callId(iteration, index, call);
          yield { type: 'tool_started', call_id: id, name: call.name, arguments: call.arguments, iteration };
          const started = now();
          let result: ToolResult;
          if (opts.signal.aborted) {
            result = { ok: false, output: 'not run: navi was interrupted' };
          } else {
            try {
              result = yield* waitWithHeartbeat(tools.execute(call.name, call.arguments, toolCtx, allowed), {
                channel,
                intervalMs: heartbeatMs,
                waitingFor: 'tool',
                now,
              });
            } catch (err) {
              if (!isAbortError(err)) throw err;
              result = { ok: false, output: 'interrupted: navi was stopped while this tool ran' };
            }
          }
          const toolMessage: ChatMessage = { role: 'tool', content: result.output, tool_name: call.name };
          addToContext(toolMessage);
          writer.enqueue((s) => s.messages.append(opts.sessionId, toolMessage));
          yield {
            type: 'tool_call',
            call_id: id,
            name: call.name,
            arguments: call.arguments,
            ok: result.ok,
            duration_ms: Math.max(0, now() - started),
            ...capForEvent(result.output),
            iteration,
          };
        }
        if (opts.signal.aborted) {
          yield end('interrupted');
          return await finish('interrupted');
        }
      }
      yield end('max_iterations');
      return await finish('max_iterations');
    } finally {
      // Whatever ended the turn (error, consumer stopping early), queued writes still land.
      await writer.flush().catch(() => undefined);
    }
  }
}
