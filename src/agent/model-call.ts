/**
 * One model call of the tool loop, as the turn sees it: the request goes out, the stream comes
 * back as events (thinking blocks, answer text, heartbeats while Ollama is silent), and the call
 * ends in a small outcome the turn decides on.
 *
 * Transport and server failures are thrown (`LlmUnavailableError`, exit 75; a capability refusal
 * is an `InvalidInputError`, exit 2): asking again cannot help with those. The model's own
 * mistakes are outcomes, because asking again often does (SPEC §13): a tool call Ollama could
 * not parse, or a reply with neither text nor a call.
 */
import { isAbortError, ModelOutputError } from '../errors.js';
import type { ChatMessage, ChatRequest, ChatUsage, LlmClient, ToolCallRequest } from '../llm/types.js';
import { fillPrompt, loadPrompt } from '../prompts.js';
import type { AgentEvent } from './events.js';
import { type EventChannel, waitWithHeartbeat } from './wait-with-heartbeat.js';

/** What the model produced in one call (whole or, when cut short, so far). */
export interface ModelReply {
  content: string;
  /** All reasoning of the call, its blocks joined in order. */
  thinking: string;
  calls: ToolCallRequest[];
  /** From the `done` line; absent when the stream never got there. */
  usage?: ChatUsage;
  /** Ollama's `done_reason`: `stop`, `length` (cut at the output limit), … */
  doneReason: string;
}

/**
 * The model's mistakes that a second try can fix: a tool call (or other output) Ollama's parser
 * could not read, a reply with neither text nor a call, and a reply the server cut off because
 * the model repeated itself (a 200 body that ends without `done`; ollama-errors.ts).
 */
export type ModelMistake = 'malformed_tool_call' | 'empty_reply' | 'reply_cut_off';

export type ModelCallOutcome =
  | { kind: 'reply'; reply: ModelReply }
  | { kind: 'mistake'; mistake: ModelMistake; detail: string; reply: ModelReply }
  | { kind: 'interrupted'; reply: ModelReply };

export interface ModelCallInput {
  llm: LlmClient;
  request: ChatRequest;
  /** Tool-loop iteration, set on every event. */
  iteration: number;
  channel: EventChannel;
  heartbeatMs: number;
  now: () => number;
}

/** True for a reply that gives the turn nothing to act on. */
export function isEmptyReply(reply: Pick<ModelReply, 'content' | 'calls'>): boolean {
  return reply.calls.length === 0 && reply.content.trim() === '';
}

/**
 * Streams one call. Thinking that follows answer text starts a new thinking block: each block
 * ends with its own `thinking_end`, so the events read in the order the model wrote them.
 */
export async function* callModel(input: ModelCallInput): AsyncGenerator<AgentEvent, ModelCallOutcome> {
  const { request, iteration } = input;
  const reply: ModelReply = { content: '', thinking: '', calls: [], doneReason: 'stop' };
  /** Characters of the thinking block being written; -1 when none is open. */
  let block = -1;
  function* closeBlock(): Generator<AgentEvent, void> {
    if (block < 0) return;
    yield { type: 'thinking_end', chars: block, iteration };
    block = -1;
  }

  const iterator = input.llm.chatStream(request)[Symbol.asyncIterator]();
  try {
    for (;;) {
      const step = yield* waitWithHeartbeat(iterator.next(), {
        channel: input.channel,
        intervalMs: input.heartbeatMs,
        waitingFor: 'model',
        now: input.now,
      });
      if (step.done) break;
      const chunk = step.value;
      switch (chunk.type) {
        case 'thinking':
          reply.thinking += chunk.text;
          block = Math.max(block, 0) + chunk.text.length;
          yield { type: 'thinking_delta', text: chunk.text, iteration };
          break;
        case 'text':
          yield* closeBlock();
          reply.content += chunk.text;
          yield { type: 'text_delta', text: chunk.text, iteration };
          break;
        case 'tool_calls':
          yield* closeBlock();
          reply.calls.push(...chunk.calls);
          break;
        case 'done':
          reply.usage = chunk.usage;
          reply.doneReason = chunk.doneReason;
          break;
        default: {
          const never: never = chunk;
          void never;
        }
      }
    }
  } catch (err) {
    if (isAbortError(err) || request.signal.aborted) return { kind: 'interrupted', reply };
    if (err instanceof ModelOutputError) {
      yield* closeBlock();
      const mistake = err.code === 'reply_cut_off' ? 'reply_cut_off' : 'malformed_tool_call';
      return { kind: 'mistake', mistake, detail: err.message, reply };
    }
    throw err;
  } finally {
    await iterator.return?.();
  }
  yield* closeBlock();
  // A reply cut at the output limit is reported as such by the turn, not asked again.
  if (isEmptyReply(reply) && reply.doneReason !== 'length') {
    const what = reply.thinking.length > 0 ? `reasoned (${reply.thinking.length} chars) and then` : '';
    return {
      kind: 'mistake',
      mistake: 'empty_reply',
      detail: `model ${request.model} ${what} gave neither an answer nor a tool call`.replace(/\s+/g, ' '),
      reply,
    };
  }
  return { kind: 'reply', reply };
}

/**
 * Times the model is asked again after a mistake of its own (a tool call Ollama could not
 * parse, an empty reply) before the turn gives up: enough for a sampling accident, not enough
 * to burn an hour on a model that cannot do it.
 */
export const MAX_MODEL_RETRIES = 2;


/** The call's id: the model's (Ollama ≥ 0.12.10 sends `call_…`), else `call_<iteration>_<n>`. */
export function callId(iteration: number, index: number, call: ToolCallRequest): string {
  return call.id && call.id.length > 0 ? call.id : `call_${iteration}_${index}`;
}

/** The assistant message of a reply, with ids for its calls (the model's, or `call_<iteration>_<n>`). */
export function assistantMessage(reply: ModelReply, iteration: number): ChatMessage {
  return {
    role: 'assistant',
    content: reply.content,
    ...(reply.thinking ? { thinking: reply.thinking } : {}),
    ...(reply.calls.length > 0 ? { tool_calls: reply.calls.map((c, i) => ({ ...c, id: callId(iteration, i, c) })) } : {}),
  };
}

export function usageOf(reply: ModelReply): { usage?: ChatUsage } {
  return reply.usage ? { usage: reply.usage } : {};
}

/** The note a retry carries after the model's mistake (prompts/agent/retry-*.md). */
export function correctionNote(mistake: ModelMistake, detail: string): string {
  switch (mistake) {
    case 'malformed_tool_call':
      return fillPrompt(loadPrompt('agent/retry-malformed-call.md'), { detail });
    case 'reply_cut_off':
      return loadPrompt('agent/retry-cut-off.md');
    case 'empty_reply':
      return loadPrompt('agent/retry-empty-reply.md');
  }
}

export function giveUpAdvice(mistake: ModelMistake): string {
  switch (mistake) {
    case 'malformed_tool_call':
      return 'a larger model, a lower temperature, or a task that writes smaller files may help';
    case 'reply_cut_off':
      return 'the model keeps looping: a larger model, or a repeat_penalty in the Modelfile, may help';
    case 'empty_reply':
      return 'try again, or a larger model';
  }
}

/** `done_reason: "length"`: the model hit its output limit (num_predict, or the window). */
export function truncatedWarning(model: string, reply: ModelReply, iteration: number): AgentEvent {
  const kept = reply.calls.length > 0 ? 'its tool calls are complete and run' : 'the answer is incomplete';
  return {
    type: 'warning',
    code: 'reply_truncated',
    message: `model ${model} stopped at its output limit (done_reason "length"); ${kept}`,
    iteration,
  };
}

