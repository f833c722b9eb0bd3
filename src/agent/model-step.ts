/**
 * The model step of a turn: what the next request carries (the one system message, the context
 * as viewed, this call's reminders), what the model can be asked (capabilities, thinking), the
 * call itself with its bounded retries after the model's own mistakes, and the `--output-schema`
 * answer. The stream classification is `model-call.ts`'s; this file decides around it.
 */
import { InvalidInputError } from '../errors.js';
import type { ChatMessage, ThinkValue } from '../llm/types.js';
import { noToolsMessage } from '../llm/ollama-errors.js';
import type { AgentEvent, StopReason } from './events.js';
import { reminderNotes, withNotes } from './mechanics.js';
import { callModelPatiently, correctionNote, MAX_MODEL_RETRIES, type ModelCallOutcome } from './model-call.js';
import { replyTokenBound } from '../llm/reply-bound.js';
import { STRUCTURED_ATTEMPTS, structuredAnswer } from './structured-answer.js';
import { serverTruncatedSilently, silentTruncationMessage } from './context-overflow.js';
import { messageChars } from './tokens.js';
import type { TurnState } from './turn-state.js';

export type MechanicsTodos = Parameters<typeof reminderNotes>[0]['todos'];

/** The context as sent (`TurnServices.view`: oversized single messages truncated for the view only). */
export type ContextView = (state: TurnState) => readonly ChatMessage[];

export class ModelStep {
  /** `--output-schema`: Ollama's `format` for the call under way. */
  private format: Record<string, unknown> | undefined;
  /** Characters the last request carried for that call only (its notes): gone from the next one. */
  private notesChars = 0;

  constructor(
    private readonly state: TurnState,
    private readonly view: ContextView,
  ) {}

  /**
   * The reminders due before this iteration's call (iteration budget, goal anchor, anti-stall);
   * the driver puts them into the context for good (`noteCarrier`).
   */
  notesFor(iteration: number, todos: MechanicsTodos, stalled: number): string[] {
    const { state } = this;
    const p = state.profile.settings;
    return reminderNotes({
      settings: {
        iterationBudget: p.iteration_budget_enabled,
        goalAnchoring: p.goal_anchoring_enabled,
        goalInterval: p.goal_anchoring_interval,
        antiStall: p.anti_stall_enabled,
        antiStallThreshold: p.anti_stall_threshold,
      },
      iteration,
      maxIterations: state.maxIterations,
      task: state.task,
      todos,
      stalledIterations: stalled,
    });
  }

  /**
   * The messages of the next model call: the one system message and the context as viewed
   * (reminders are in it already). `extra` is a note for this call only (the correction after a
   * model mistake, the structured answer's retry), in the last message (`withNotes`).
   */
  buildRequest(extra?: string): ChatMessage[] {
    const view = this.view(this.state);
    // One array of the final size: a long history is not pushed message by message on every call.
    const request = [this.systemMessage()].concat(view.some((m) => m.role === 'system') ? view.filter((m) => m.role !== 'system') : view);
    const size = request.length;
    const lastChars = request[size - 1]?.content.length ?? 0;
    const sent = withNotes(request, extra !== undefined ? [extra] : []);
    const last = sent[sent.length - 1];
    // What only this call carries (a correction), gone from the next request: the silent
    // truncation check must not mistake its absence for the server dropping messages.
    this.notesChars = last === undefined ? 0 : sent.length > size ? messageChars(last) : last.content.length - lastChars;
    return sent;
  }

  /**
   * Persona + profile prompt, then the memory summary: ONE system message, the same object for
   * every call of the turn. Ollama gathers all system messages at the top of the prompt, so a
   * second one would be merged there anyway (SPEC §8).
   */
  private systemMessage(): ChatMessage {
    const { state } = this;
    if (state.system === null) {
      // Project instructions and --append-system-prompt after the profile's prompt, memory last:
      // the part that changes between runs comes after the parts that do not.
      const appendix = state.settings.systemAppendix;
      const prompt = appendix ? `${state.systemPrompt()}\n\n${appendix}` : state.systemPrompt();
      state.system = { role: 'system', content: state.memory ? `${prompt}\n\n${state.memory.content}` : prompt };
    }
    return state.system;
  }

  /**
   * Settles what the current model can be asked, from `/api/show` capabilities (undefined: an
   * old server that does not say). Returns a warning to emit, if any.
   */
  adoptCapabilities(capabilities: string[] | undefined): AgentEvent | null {
    const { state } = this;
    state.modelChecked = state.model;
    // Ollama refuses tools to a model without the capability (HTTP 400, server/routes.go); an
    // agent without tools cannot work, and retrying later will not change the model.
    if (capabilities !== undefined && !capabilities.includes('tools') && state.schemas.length > 0) {
      throw new InvalidInputError('model_no_tools', noToolsMessage(state.model, `Ollama reports its capabilities as: ${capabilities.join(', ') || 'none'}`));
    }
    // The configured value as it is: an effort level ("low" | "medium" | "high") goes out as a level.
    const wanted: ThinkValue = state.profile.settings.think_enabled ? state.settings.think : false;
    const wantsThink = wanted !== false;
    // `think: true` to a model without `thinking` is an HTTP 400; unknown capabilities keep the
    // configured value, and a refusal is handled at the call (ask).
    state.think = wantsThink && (capabilities === undefined || capabilities.includes('thinking')) ? wanted : false;
    return wantsThink && state.think === false && state.settings.thinkExplicit === true ? this.noThinkingWarning() : null;
  }

  private noThinkingWarning(): AgentEvent {
    return {
      type: 'warning',
      code: 'thinking_unsupported',
      message: `model ${this.state.model} does not support thinking; running without it (set llm.think: false to silence this)`,
    };
  }

  /**
   * One model call, asked again (bounded) when the model itself went wrong: a tool call Ollama
   * could not parse, or an empty reply. Each retry carries a short correction in its last
   * message; the failed attempt is neither stored nor sent back.
   */
  async *ask(note?: string): AsyncGenerator<AgentEvent, ModelCallOutcome> {
    const { state } = this;
    const { settings } = state;
    let correction: string | undefined = note;
    let previousNotesChars = this.notesChars;
    if (state.modelChecked !== state.model) {
      // switch_profile brought a profile with its own model.
      const info = await state.deps.llm.showModel(state.model, state.signal).catch(() => null);
      const warning = this.adoptCapabilities(info?.capabilities);
      if (warning !== null) yield warning;
    }
    for (let attempt = 0; ; attempt++) {
      // A store that failed to open (locked, unreachable) ends the run before a model call.
      state.writer.throwIfFailed();
      const request = {
        model: state.model,
        messages: this.buildRequest(correction),
        // The same array object every call: request-body.ts reuses the frame when `tools` is identical.
        tools: state.schemas.length > 0 ? state.schemas : undefined,
        think: state.think,
        numCtx: state.numCtx,
        // Every reply bounded to the room left (reply-bound.ts: unbounded, a reply may run to
        // 10 × num_ctx and context shift discards half the window mid-reply).
        numPredict: replyTokenBound({ numCtx: state.contextBudget, promptTokens: state.estimate() }),
        temperature: state.profile.settings.temperature ?? settings.temperature,
        keepAlive: settings.keepAlive,
        signal: state.signal,
        ...(this.format !== undefined ? { format: this.format } : {}),
      };
      state.modelCalls++;
      const vanishedChars = previousNotesChars;
      previousNotesChars = this.notesChars;
      let outcome: ModelCallOutcome;
      try {
        // A transient outage (busy, restarting, runner reloading) is waited out up to llm.outage_retry.
        outcome = yield* callModelPatiently({
          llm: state.deps.llm,
          request,
          iteration: state.iteration,
          channel: state.channel,
          heartbeatMs: state.heartbeatMs,
          now: state.now,
          outageRetryMs: settings.outageRetryMs ?? 0,
        });
      } catch (err) {
        // Capabilities were unknown and the server refused thinking: go on without it.
        if (err instanceof InvalidInputError && err.code === 'model_no_thinking' && state.think !== false) {
          state.think = false;
          if (settings.thinkExplicit === true) yield this.noThinkingWarning();
          attempt--;
          continue;
        }
        throw err;
      }
      if (outcome.reply.usage) {
        const previous = state.previousPromptTokens;
        const current = outcome.reply.usage.promptTokens;
        state.countUsage(outcome.reply.usage);
        if (serverTruncatedSilently({ previous, current, vanishedChars }) && previous !== null) {
          yield { type: 'warning', code: 'context_truncated_by_server', message: silentTruncationMessage(state.model, previous, current), iteration: state.iteration };
        }
      }
      if (outcome.kind !== 'mistake' || attempt >= MAX_MODEL_RETRIES || state.signal.aborted) return outcome;
      yield {
        type: 'warning',
        code: outcome.mistake,
        message: `${outcome.detail}; asking again (retry ${attempt + 1} of ${MAX_MODEL_RETRIES})`,
        iteration: state.iteration,
      };
      correction = correctionNote(outcome.mistake, outcome.detail);
    }
  }

  /** `--output-schema`: the answer again, in the schema's shape (structured-answer.ts says why). */
  async *structuredFinal(): AsyncGenerator<AgentEvent, StopReason> {
    const { state } = this;
    const output = state.input.outputSchema;
    if (output === undefined) return 'completed';
    const result = yield* structuredAnswer(
      {
        ask: async function* (this: ModelStep, format: Record<string, unknown>, note: string | undefined) {
          this.format = format;
          try {
            return yield* this.ask(note);
          } finally {
            this.format = undefined;
          }
        }.bind(this),
        keep: (m) => {
          state.addToContext(m);
          state.persist(m);
        },
      },
      output,
    );
    if (result.kind === 'interrupted') return 'interrupted';
    state.finalText = result.text;
    if (result.kind === 'ok') {
      state.structured = { value: result.value };
      return 'completed';
    }
    state.structured = { errors: result.errors };
    state.failure = `the answer does not match --output-schema after ${STRUCTURED_ATTEMPTS} attempts: ${result.errors.join('; ')}`;
    yield { type: 'error', code: 'output_schema_mismatch', message: state.failure, iteration: state.iteration };
    return 'model_error';
  }
}
