/**
 * The turn's side of issue 17 point 3: the rules (context-overflow.ts) as tables, then the turn
 * against a scripted model that refuses prompts for size as llama-server does (ContextOverflowError).
 */
import { describe, expect, it } from 'vitest';
import {
  baselineAfterOverflow,
  budgetAfterOverflow,
  loadedContextOf,
  MAX_OVERFLOW_COMPRESSIONS,
  overflowEndMessage,
  serverTruncatedSilently,
  type PromptCountCheck,
} from '../../src/agent/context-overflow.js';
import type { AgentEvent } from '../../src/agent/events.js';
import { ContextOverflowError } from '../../src/llm/ollama-errors.js';
import { Agent } from '../../src/agent/agent.js';
import type { ChatRequest } from '../../src/llm/types.js';
import { MemoryStore } from '../support/memory-store.js';
import { ScriptedLlm, type ScriptedTurn } from '../support/scripted-llm.js';
import { collect, options, profiles, registry, setup } from './helpers.js';

describe('budgetAfterOverflow', () => {
  it.each([
    ['the server named a smaller window', 65536, { promptTokens: 9000, contextTokens: 8192 }, 8192],
    ['no window named (the older "prompt is longer" text)', 65536, { promptTokens: undefined, contextTokens: undefined }, 65536],
    ['a window not below the budget', 4096, { promptTokens: 5000, contextTokens: 8192 }, 4096],
    ['a nonsense window', 4096, { promptTokens: 5000, contextTokens: 0 }, 4096],
  ])('%s', (_, budget, sizes, expected) => {
    expect(budgetAfterOverflow(budget, sizes)).toBe(expected);
  });
});

describe('loadedContextOf (/api/ps)', () => {
  const running = [
    { name: 'llama3.1:latest', contextLength: 8192 },
    { name: 'qwen3:8b', contextLength: 40960 },
    { name: 'gpt-oss:20b' },
  ];
  it.each([
    ['the model by its name', 'qwen3:8b', 40960],
    ['an unqualified name is :latest', 'llama3.1', 8192],
    ['not loaded', 'mistral', undefined],
    ['loaded, context not reported (an older server)', 'gpt-oss:20b', undefined],
  ])('%s', (_, model, expected) => {
    expect(loadedContextOf(running, model)).toBe(expected);
  });
});

describe('baselineAfterOverflow', () => {
  it.each([
    ['the refused prompt size', { promptTokens: 9000, contextTokens: 8192 }, 9000],
    ['only the window: just past it', { promptTokens: undefined, contextTokens: 8192 }, 8193],
    ['neither: keep the estimate', { promptTokens: undefined, contextTokens: undefined }, undefined],
  ])('%s', (_, sizes, expected) => {
    expect(baselineAfterOverflow(sizes)).toBe(expected);
  });
});

describe('serverTruncatedSilently', () => {
  const table: Array<[string, PromptCountCheck, boolean]> = [
    ['first call: nothing to compare', { previous: null, current: 100, vanishedChars: 0 }, false],
    ['the history grew, the count too', { previous: 1000, current: 1200, vanishedChars: 300 }, false],
    ['the same prompt', { previous: 1000, current: 1000, vanishedChars: 0 }, false],
    ['fell by what the vanished notes explain', { previous: 1000, current: 900, vanishedChars: 300 }, false],
    ['fell by more than the notes explain', { previous: 1000, current: 600, vanishedChars: 300 }, true],
    ['fell without any notes', { previous: 5000, current: 4096, vanishedChars: 0 }, true],
    ['no count reported', { previous: 1000, current: 0, vanishedChars: 0 }, false],
  ];
  it.each(table)('%s', (_, check, expected) => {
    expect(serverTruncatedSilently(check)).toBe(expected);
  });
});

describe('overflowEndMessage', () => {
  it('names both sizes, the num_ctx asked for when the server loaded less, what was tried and the fix', () => {
    const text = overflowEndMessage({ model: 'qwen3:8b', numCtx: 65536, sizes: { promptTokens: 9000, contextTokens: 8192 }, compressions: 2 });
    expect(text).toContain('(9000 tokens)');
    expect(text).toContain('of 8192 tokens Ollama loaded for qwen3:8b (navi asked for num_ctx 65536)');
    expect(text).toContain('even after 2 compressions');
    expect(text).toMatch(/Start a new session .* larger context/);
    expect(overflowEndMessage({ model: 'm', numCtx: 4096, sizes: { promptTokens: undefined, contextTokens: undefined }, compressions: 0 })).toContain(
      'nothing in it could be compressed',
    );
  });
});

/** llama-server's refusal as navi's llm layer reports it. */
function refusal(promptTokens: number, contextTokens: number): ContextOverflowError {
  return new ContextOverflowError(`the conversation (${promptTokens} tokens) no longer fits the context window of ${contextTokens} tokens`, { promptTokens, contextTokens });
}

/** Tool calls for `rounds` iterations (a history to compress), then `after` for every tool-loop call; helper calls (no tools) summarise. */
function responder(rounds: number, after: (toolCalls: number) => ScriptedTurn): (req: ChatRequest) => ScriptedTurn {
  let toolCalls = 0;
  return (req) => {
    if (req.tools === undefined) return { content: 'Summary: listed the directory several times.' };
    toolCalls++;
    if (toolCalls <= rounds) return { toolCalls: [{ name: 'list_dir', arguments: {} }], promptTokens: 1000 + toolCalls * 10 };
    return after(toolCalls - rounds);
  };
}

function agentWith(script: (req: ChatRequest) => ScriptedTurn): { agent: Agent; scripted: ScriptedLlm } {
  const scripted = new ScriptedLlm(script);
  return { scripted, agent: new Agent({ llm: scripted, store: Promise.resolve(new MemoryStore()), tools: registry, profiles }) };
}

function codes(events: AgentEvent[], type: 'warning' | 'error'): string[] {
  return events.flatMap((e) => (e.type === type ? [e.code] : []));
}

describe('a prompt the server refuses for size', () => {
  it('is compressed and asked again: the budget becomes the server window, the answer comes', async () => {
    const { agent, scripted } = agentWith(responder(12, (n) => (n === 1 ? { error: refusal(9000, 8192) } : { content: 'Done.' })));
    const { events, outcome } = await collect(agent.runStream(options({ numCtx: 32768, numCtxExplicit: true })));
    expect(outcome.stopReason).toBe('completed');
    expect(outcome.text).toBe('Done.');
    expect(codes(events, 'warning')).toEqual(['context_overflow']);
    // The compression measured the conversation as the server did (the refused prompt's size)…
    const started = events.filter((e) => e.type === 'compression_started');
    expect(started).toEqual([{ type: 'compression_started', reason: 'midturn', estimated_tokens: 9000 }]);
    expect(events.some((e) => e.type === 'context_compressed')).toBe(true);
    // …num_ctx sent stays as it was (a change reloads the model), and the retry is shorter.
    const chats = scripted.requests.filter((r) => r.tools !== undefined);
    const [refused, retried] = chats.slice(-2);
    expect(retried?.numCtx).toBe(32768);
    expect(retried?.messages.length).toBeLessThan(refused?.messages.length ?? 0);
  });

  it(`gives up after ${MAX_OVERFLOW_COMPRESSIONS} compressions: context_too_large with the sizes and the fix`, async () => {
    const { agent, scripted } = agentWith(responder(30, () => ({ error: refusal(9000, 8192) })));
    const { events, outcome } = await collect(agent.runStream(options({ numCtx: 32768, numCtxExplicit: true })));
    expect(outcome.stopReason).toBe('context_too_large');
    const compressions = events.filter((e) => e.type === 'context_compressed').length;
    expect(compressions).toBeGreaterThan(0);
    expect(compressions).toBeLessThanOrEqual(MAX_OVERFLOW_COMPRESSIONS);
    expect(codes(events, 'warning')).toEqual(Array.from({ length: compressions }, () => 'context_overflow'));
    const refused = scripted.requests.filter((r) => r.tools !== undefined).length - 30;
    expect(refused).toBe(compressions + 1);
    expect(outcome.error).toContain('(9000 tokens) does not fit the context of 8192 tokens');
    expect(outcome.error).toContain(`even after ${compressions} compression`);
    expect(outcome.text).toBe(outcome.error);
  });

  it('with nothing to compress (the first request) ends context_too_large at once, without a compression', async () => {
    const { agent, llm } = setup([{ error: refusal(9000, 8192) }]);
    const { events, outcome } = await collect(agent.runStream(options({ numCtx: 32768, numCtxExplicit: true })));
    expect(outcome.stopReason).toBe('context_too_large');
    expect(outcome.error).toContain('nothing in it could be compressed');
    expect(events.some((e) => e.type === 'compression_started')).toBe(false);
    expect(llm.requests).toHaveLength(1);
  });
});

describe('a server that truncates silently', () => {
  it('warns context_truncated_by_server when the prompt count falls while the history grew', async () => {
    const { agent } = setup([
      { toolCalls: [{ name: 'list_dir', arguments: {} }], promptTokens: 5000 },
      { toolCalls: [{ name: 'list_dir', arguments: {} }], promptTokens: 5200 },
      { content: 'Done.', promptTokens: 4096 },
    ]);
    const { events, outcome } = await collect(agent.runStream(options({ numCtx: 32768, numCtxExplicit: true })));
    expect(outcome.stopReason).toBe('completed');
    const warnings = events.filter((e) => e.type === 'warning');
    expect(warnings.map((w) => w.code)).toEqual(['context_truncated_by_server']);
    expect(warnings[0]?.message).toContain('counted 4096 tokens, down from 5200');
  });

  it('stays quiet while the count grows', async () => {
    const { agent } = setup([
      { toolCalls: [{ name: 'list_dir', arguments: {} }], promptTokens: 5000 },
      { content: 'Done.', promptTokens: 5300 },
    ]);
    const { events } = await collect(agent.runStream(options({ numCtx: 32768, numCtxExplicit: true })));
    expect(events.filter((e) => e.type === 'warning')).toEqual([]);
  });
});
