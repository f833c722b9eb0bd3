/**
 * An LlmClient that plays scripted turns and records every request: for unit tests of the
 * agent core, which takes its model as a parameter. (Scenario tests use the real Ollama
 * adapter against the fake server instead.)
 */
import type { ChatChunk, ChatRequest, ChatResult, LlmClient, ModelDetails, ToolCallRequest } from '../../src/llm/types.js';

export interface ScriptedTurn {
  thinking?: string;
  content?: string;
  toolCalls?: ToolCallRequest[];
  promptTokens?: number;
  /** Wait for the request's signal (a silent prefill that only a stop ends). */
  hang?: boolean;
  /** Throw this instead of answering (after `chunks`, when given). */
  error?: Error;
  /** Stream exactly these chunks (before `done`) instead of thinking/content/toolCalls. */
  chunks?: ChatChunk[];
  /** `done_reason` of the final chunk; default `stop`. */
  doneReason?: string;
}

export interface ScriptedLlmOptions {
  /** What `showModel` reports as capabilities; default: none reported (an older server). */
  capabilities?: string[];
  /** Per model name, over `capabilities`. */
  capabilitiesByModel?: Record<string, string[]>;
}

/** Answers a request by index (0-based, counting every call), for long generated sessions. */
export type ScriptedResponder = (req: ChatRequest, index: number) => ScriptedTurn;

export class ScriptedLlm implements LlmClient {
  readonly requests: ChatRequest[] = [];
  private index = 0;

  /** A list of turns played in order (then "done."), or a function that answers each request. */
  constructor(
    private readonly turns: ScriptedTurn[] | ScriptedResponder,
    private readonly options: ScriptedLlmOptions = {},
  ) {}

  async *chatStream(req: ChatRequest): AsyncIterable<ChatChunk> {
    this.requests.push({ ...req, messages: req.messages.map((m) => ({ ...m })) });
    const i = this.index++;
    const turn = typeof this.turns === 'function' ? this.turns(req, i) : (this.turns[i] ?? { content: 'done.' });
    if (turn.chunks) yield* turn.chunks;
    if (turn.error) throw turn.error;
    if (turn.hang) {
      await new Promise<void>((_, reject) => {
        const fail = (): void => reject(new DOMException('aborted', 'AbortError'));
        if (req.signal.aborted) fail();
        req.signal.addEventListener('abort', fail, { once: true });
      });
    }
    if (!turn.chunks) {
      if (turn.thinking) yield { type: 'thinking', text: turn.thinking };
      if (turn.content) {
        for (let i = 0; i < turn.content.length; i += 5) yield { type: 'text', text: turn.content.slice(i, i + 5) };
      }
      if (turn.toolCalls) yield { type: 'tool_calls', calls: turn.toolCalls };
    }
    yield {
      type: 'done',
      usage: { promptTokens: turn.promptTokens ?? 100, completionTokens: 10 },
      doneReason: turn.doneReason ?? 'stop',
      model: req.model,
    };
  }

  async chat(req: ChatRequest): Promise<ChatResult> {
    const out: ChatResult = { content: '', thinking: '', toolCalls: [], usage: { promptTokens: 0, completionTokens: 0 }, doneReason: 'stop', model: req.model };
    for await (const c of this.chatStream(req)) {
      if (c.type === 'text') out.content += c.text;
      else if (c.type === 'thinking') out.thinking += c.text;
      else if (c.type === 'tool_calls') out.toolCalls.push(...c.calls);
      else {
        out.usage = c.usage;
        out.doneReason = c.doneReason;
      }
    }
    return out;
  }

  showModel(model: string): Promise<ModelDetails> {
    const capabilities = this.options.capabilitiesByModel?.[model] ?? this.options.capabilities;
    return Promise.resolve({ name: model, contextLength: 32768, ...(capabilities ? { capabilities } : {}) });
  }

  listModels(): Promise<string[]> {
    return Promise.resolve(['scripted']);
  }

  version(): Promise<string> {
    return Promise.resolve('0.0.0-scripted');
  }
}
