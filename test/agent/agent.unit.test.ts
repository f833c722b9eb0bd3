import { describe, expect, it } from 'vitest';
import { effectiveNumCtx } from '../../src/agent/agent.js';
import { estimateTokens } from '../../src/agent/tokens.js';
import { join } from 'node:path';
import type { ChatMessage } from '../../src/llm/types.js';
import type { ScriptedTurn } from '../support/scripted-llm.js';
import { existsSync, readFileSync } from 'node:fs';
import { MemoryStore } from '../support/memory-store.js';
import { ScriptedLlm } from '../support/scripted-llm.js';
import { Agent } from '../../src/agent/agent.js';
import { collect, options, profiles, registry, setup } from './helpers.js';


/** A request without the transient messages appended at its end (iteration budget, anchors). */
/**
 * A request without its last message: what the next request of the turn must start with
 * (SPEC §8). The last message carries the per-call reminders and is never stored.
 */
function stable(messages: ChatMessage[] | undefined): ChatMessage[] {
  return (messages ?? []).slice(0, -1);
}

describe('Agent tool loop', () => {
  it('runs tools, feeds results back, and stores every message in order', async () => {
    const { agent, store, llm } = setup([
      { thinking: 'need a file', toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'hello' } }] },
      { toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] },
      { content: 'The file says hello.' },
    ]);
    const opts = options();
    const { events, outcome } = await collect(agent.runStream(opts));
    expect(outcome.stopReason).toBe('completed');
    expect(outcome.text).toBe('The file says hello.');
    expect(outcome.modelCalls).toBe(3);
    expect(readFileSync(join(opts.cwd, 'a.txt'), 'utf8')).toBe('hello');
    const types = events.map((e) => e.type);
    expect(types.slice(0, 2)).toEqual(['run_started', 'model_info']);
    expect(types).toContain('thinking_end');
    expect(types.at(-1)).toBe('stream_end');
    const stored = store.display.get('s1') ?? [];
    // The task, then the first call's budget note (a trailing user message, stored: the history
    // is append-only, so a note once sent stays)…
    expect(stored.map((m) => m.role)).toEqual(['user', 'user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
    expect(stored.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(stored[1]?.content).toContain('Iteration 1 of');
    expect(stored[2]?.thinking).toBe('need a file');
    // The model saw the tool result in its next request (no budget note: iteration 2 says nothing new)…
    const second = llm.requests[1]?.messages ?? [];
    expect(second.at(-1)).toMatchObject({ role: 'tool', tool_name: 'write_file', content: expect.not.stringContaining('Iteration') as string });
    // …and its own reasoning of the turn, sent back with the call (SPEC §13).
    expect(second.at(-2)).toMatchObject({ role: 'assistant', thinking: 'need a file' });
    // …and every request is the one before plus what came since, element for element.
    for (let i = 1; i < llm.requests.length; i++) {
      const before = llm.requests[i - 1]?.messages ?? [];
      expect(llm.requests[i]?.messages.slice(0, before.length)).toEqual(before);
    }
  });

  it('overlaps earlier writes with the next model call, but runs no tool of its answer if one failed', async () => {
    const store = new MemoryStore();
    const append = store.messages.append.bind(store.messages);
    let calls = 0;
    // The first tool result's write fails only once the second model call has begun: it is
    // still pending when that call starts (a hang guard fails it should the call never come).
    let failWrite: () => void = () => undefined;
    const slowFailure = new Promise<never>((_, reject) => (failWrite = () => reject(new Error('disk full'))));
    slowFailure.catch(() => undefined);
    const hangGuard = setTimeout(() => failWrite(), 20_000);
    store.messages.append = (...args) => (++calls === 3 ? slowFailure : append(...args));
    const turns = [
      { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'one' } }] },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'b.txt', content: 'two' } }] },
    ];
    const llm = new ScriptedLlm((_req, i) => {
      if (i === 1) failWrite();
      return turns[i] ?? { content: 'done.' };
    });
    const agent = new Agent({ llm, store: Promise.resolve(store), tools: registry, profiles });
    const opts = options();
    await expect(collect(agent.runStream(opts))).rejects.toThrow('disk full');
    clearTimeout(hangGuard);
    // The failed write (the first tool result) did not delay the second call…
    expect(llm.requests).toHaveLength(2);
    // …but the answer to it was not acted on.
    expect(existsSync(join(opts.cwd, 'a.txt'))).toBe(true);
    expect(existsSync(join(opts.cwd, 'b.txt'))).toBe(false);
  });

  it('keeps the request prefix byte-stable between calls of one turn', async () => {
    const { agent, llm } = setup([{ toolCalls: [{ name: 'list_dir', arguments: {} }] }, { toolCalls: [{ name: 'todo', arguments: { action: 'list' } }] }, { content: 'ok' }]);
    await collect(agent.runStream(options()));
    const [r1, r2, r3] = llm.requests;
    // Append-only: each request is the previous one, whole, plus what came since.
    const s1 = r1?.messages ?? [];
    const s2 = r2?.messages ?? [];
    expect(JSON.stringify(r2?.messages.slice(0, s1.length))).toBe(JSON.stringify(s1));
    expect(JSON.stringify(r3?.messages.slice(0, s2.length))).toBe(JSON.stringify(s2));
    expect(JSON.stringify(r1?.tools)).toBe(JSON.stringify(r3?.tools));
    expect(r1?.messages[0]?.role).toBe('system');
    expect(r1?.messages[0]?.content).toContain('\n---\n');
    // One system message, the first: Ollama hoists every system message to the prompt's top.
    for (const r of [r1, r2, r3]) expect(r?.messages.filter((m) => m.role === 'system')).toHaveLength(1);
    // The first call's budget note rides after the task, and stays; iteration 2 and 3 say nothing new.
    expect(r1?.messages.at(-1)).toMatchObject({ role: 'user', content: expect.stringContaining('Iteration 1 of') as string });
    expect(r2?.messages.at(-1)).toMatchObject({ role: 'tool', content: expect.not.stringContaining('Iteration') as string });
  });

  it.each([
    ['unknown tool', { name: 'nope', arguments: {} }, /unknown tool 'nope'/],
    ['invalid JSON arguments', { name: 'read_file', arguments: '{"path": ' }, /invalid JSON arguments/],
    ['schema mismatch', { name: 'read_file', arguments: { path: 42 } }, /invalid arguments for 'read_file'/],
    ['path outside the working directory', { name: 'read_file', arguments: { path: '../../etc/passwd' } }, /outside|escape/i],
  ])('returns a bad call (%s) to the model as a failed result', async (_name, call, pattern) => {
    const { agent, llm } = setup([{ toolCalls: [call] }, { content: 'recovered' }]);
    const { events, outcome } = await collect(agent.runStream(options()));
    expect(outcome.stopReason).toBe('completed');
    const result = events.find((e) => e.type === 'tool_call');
    expect(result).toMatchObject({ type: 'tool_call', ok: false });
    expect(result?.type === 'tool_call' ? result.output : '').toMatch(pattern);
    expect(llm.requests[1]?.messages.at(-1)?.content).toMatch(pattern);
  });

  it('stops at max_iterations with an outcome, not an exception', async () => {
    const loop: ScriptedTurn = { toolCalls: [{ name: 'list_dir', arguments: {} }] };
    const { agent } = setup([loop, loop, loop, loop]);
    const { events, outcome } = await collect(agent.runStream(options({ maxIterations: 2 })));
    expect(outcome.stopReason).toBe('max_iterations');
    expect(outcome.iterations).toBe(2);
    expect(events.at(-1)).toMatchObject({ type: 'stream_end', stop_reason: 'max_iterations' });
  });

  it('stops during a silent prefill, emitting heartbeats while it waits, and keeps the user message', async () => {
    const { agent, store } = setup([{ hang: true }]);
    const controller = new AbortController();
    // Stopped once a heartbeat has come while the model is silent; a hang guard stops it anyway
    // (and the heartbeat assertion then fails) should none ever come.
    const hangGuard = setTimeout(() => controller.abort(), 20_000);
    const run = agent.runStream(options({ signal: controller.signal, heartbeatMs: 20 }));
    const events: Awaited<ReturnType<typeof collect>>['events'] = [];
    let step = await run.next();
    while (step.done !== true) {
      events.push(step.value);
      if (step.value.type === 'heartbeat') controller.abort();
      step = await run.next();
    }
    clearTimeout(hangGuard);
    const outcome = step.value;
    expect(outcome.stopReason).toBe('interrupted');
    expect(events.some((e) => e.type === 'heartbeat' && e.waiting_for === 'model')).toBe(true);
    expect(store.display.get('s1')?.map((m) => m.role)).toEqual(['user', 'user']);
  });

  it('continues a stored session: the next request carries the earlier context', async () => {
    const { agent, store, llm } = setup([{ content: 'first answer' }, { content: 'second answer' }]);
    await collect(agent.runStream(options()));
    await collect(agent.runStream(options({ newSession: false, message: 'and then?' })));
    const second = stable(llm.requests[1]?.messages).map((m) => [m.role, m.content]);
    // The first turn's budget note is part of the stored context: the continued session renders the same.
    expect(second?.slice(1)).toEqual([
      ['user', 'do the thing'],
      ['user', expect.stringContaining('Iteration 1 of')],
      ['assistant', 'first answer'],
      ['user', 'and then?'],
    ]);
    expect(store.display.get('s1')).toHaveLength(6);
  });

  it('lowers num_ctx to the model context length unless the user set it', async () => {
    const { agent, llm } = setup([{ content: 'ok' }]);
    const { events } = await collect(agent.runStream(options({ numCtx: 65536, numCtxExplicit: false })));
    expect(events.find((e) => e.type === 'model_info')).toMatchObject({ num_ctx: 32768, context_length: 32768 });
    expect(llm.requests[0]?.numCtx).toBe(32768);
    expect(events.some((e) => e.type === 'warning')).toBe(false);
  });

  it('lowers an explicit num_ctx above the model context length too, and says so (the server clamps it)', async () => {
    const { agent, llm } = setup([{ content: 'ok' }]);
    const { events } = await collect(agent.runStream(options({ numCtx: 65536, numCtxExplicit: true })));
    expect(events.find((e) => e.type === 'model_info')).toMatchObject({ num_ctx: 32768, context_length: 32768 });
    expect(llm.requests[0]?.numCtx).toBe(32768);
    const warning = events.find((e) => e.type === 'warning' && e.code === 'num_ctx_exceeds_model');
    expect(warning?.type === 'warning' && warning.message).toMatch(/65536 exceeds .* 32768; using 32768/);
  });

  it('refuses a prompt larger than the window before any write or model call (issue 18 item 15)', async () => {
    const { agent, llm, store } = setup([{ content: 'never' }]);
    const run = collect(agent.runStream(options({ numCtx: 1000, message: 'x'.repeat(50_000) })));
    await expect(run).rejects.toMatchObject({ status: 'invalid_input', code: 'prompt_too_large' });
    await expect(run).rejects.toThrow(/does not fit .*about \d+ tokens; num_ctx 1000, model context 32768\)\. Shorten it .*raise llm\.num_ctx \(up to the model's 32768\)/);
    expect(llm.requests).toHaveLength(0);
    // Nothing stored: the session's creation was held and is dropped.
    expect(await store.sessions.get('s1')).toBeNull();
    expect(store.display.get('s1')).toBeUndefined();
  });
});

describe('effectiveNumCtx: min(num_ctx, context_length), set by the user or not (issue 17 point 4)', () => {
  it.each([
    [65536, 40960, 40960],
    [131072, 40960, 40960],
    [8192, 40960, 8192],
    [65536, undefined, 65536],
    [65536, 0, 65536],
  ])('configured %i, model context %s → %i', (configured, len, want) => {
    expect(effectiveNumCtx(configured, len)).toBe(want);
  });
});

describe('estimateTokens', () => {
  it.each([
    [{ baseline: null, charsSinceBaseline: 300, totalChars: 300 }, 100],
    [{ baseline: 1000, charsSinceBaseline: 30, totalChars: 3000 }, 1010],
    // A baseline far below the heuristic (a cache-only count) is not trusted.
    [{ baseline: 10, charsSinceBaseline: 30, totalChars: 30000 }, 10000],
  ])('%j → %i', (input, want) => {
    expect(estimateTokens(input)).toBe(want);
  });
});
