/**
 * The agent core beyond the plain tool loop (issue 3): planning, sub-agents, switch_profile,
 * long-term memory and compression — driven by a scripted model, with an in-memory store.
 */
import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { Agent, subagentTimeoutS, type TurnOptions } from '../../src/agent/agent.js';
import { parseFacts } from '../../src/agent/memory-extraction.js';
import { MemoryStore } from '../support/memory-store.js';
import { ScriptedLlm, type ScriptedTurn } from '../support/scripted-llm.js';
import { collect, options as baseOptions, profiles, registry, setup } from './helpers.js';

function options(over: Partial<TurnOptions> = {}): TurnOptions {
  return baseOptions({ sessionId: 'root', message: 'Refactor the parser and update its docs', numCtx: 32768, ...over });
}

const ANALYSIS = (complexity: string): string =>
  [
    'TASK: Refactor the parser',
    'GOAL: A simpler parser with docs that match',
    'UNKNOWNS: none',
    'RESOURCES: src/parser.ts',
    'KNOWLEDGE RULES: keep the public API',
    `COMPLEXITY: ${complexity}`,
    'SUBTASKS: read, refactor, document',
    'COMMITMENTS: run the tests',
  ].join('\n');

const PLAN = [
  'MILESTONES:',
  '- Parser understood',
  '- Parser refactored and documented',
  'STEPS:',
  '1. Read src/parser.ts — TOOL: read_file',
  '2. Refactor the tokenizer loop — SELF',
  '3. Update the parser docs — TOOL: edit_file',
  '4. Run the test suite — TOOL: shell',
  '5. Summarise the change — SELF',
].join('\n');

describe('plan tool', () => {
  it('plans, fills the todo, injects the plan after the tool batch, and proceeds headless on a complex task', async () => {
    const { agent, store, llm } = setup([
      { toolCalls: [{ name: 'plan', arguments: {} }] },
      { content: ANALYSIS('complex') },
      { content: PLAN },
      { content: 'Working on step 1.' },
    ]);
    const { events, outcome } = await collect(agent.runStream(options()));
    expect(outcome.stopReason).toBe('completed');
    const types = events.map((e) => e.type);
    expect(types).toContain('planning_status');
    expect(types).toContain('plan_ready');
    expect(types).toContain('todo_updated');
    expect(events.some((e) => e.type === 'planning_status' && e.phase === 'auto_confirmed')).toBe(true);
    expect((await store.state.getTodos('root')).map((t) => t.text)).toHaveLength(5);
    // Planner calls never ask for reasoning.
    expect(llm.requests[1]?.think).toBe(false);
    expect(llm.requests[2]?.think).toBe(false);
    const toolCall = events.find((e) => e.type === 'tool_call');
    expect(toolCall?.type === 'tool_call' && toolCall.output).toMatch(/confirmed automatically/);
    const stored = store.display.get('root') ?? [];
    const plan = stored.find((m) => m.isPlan);
    expect(plan?.role).toBe('assistant');
    // The model reads the plan in the tool result: no message of its own in its view (an
    // assistant message would merge with the next reply, a user one would drop the turn's
    // reasoning from qwen3/gpt-oss prompts).
    const final = llm.requests[3]?.messages.filter((m) => m.role !== 'system') ?? [];
    // (The second user message is the first call's budget note, stored: the history is append-only.)
    expect(final.map((m) => m.role)).toEqual(['user', 'user', 'assistant', 'tool']);
    expect(final[3]?.content).toMatch(/confirmed automatically[\s\S]*\n\n/);
    expect(final[3]?.content).toContain(plan?.content ?? 'no plan');
    expect(stored.map((m) => m.role)).toEqual(['user', 'user', 'assistant', 'tool', 'assistant', 'assistant']);
    expect(store.logRows).toHaveLength(1);
  });

  it('re-plans with a reason, replacing the todo', async () => {
    const store = new MemoryStore();
    await store.sessions.create({ id: 'root', kind: 'chat', profile: 'default', cwd: '/', title: '', model: 'm' });
    await store.state.setTodos('root', [{ id: 1, text: 'old step', status: 'done' }]);
    const { agent, llm } = setup(
      [{ toolCalls: [{ name: 'plan', arguments: { reason: 'tests fail differently', updated_goal: 'fix the lexer' } }] }, { content: ANALYSIS('simple') }, { content: '1. Fix the lexer — SELF' }, { content: 'ok' }],
      store,
    );
    await collect(agent.runStream(options({ newSession: false })));
    const analysisRequest = JSON.stringify(llm.requests[1]?.messages);
    expect(analysisRequest).toContain('tests fail differently');
    expect(analysisRequest).toContain('old step');
    expect((await store.state.getTodos('root')).map((t) => t.text)).toEqual(['Fix the lexer']);
  });
});

describe('sub-agents', () => {
  it('runs a blocking sub-agent whose events are forwarded live and whose answer is the tool result', async () => {
    const { agent, store } = setup([
      { toolCalls: [{ name: 'spawn_agent', arguments: { task: 'count the files', profile_id: 'researcher' } }] },
      { toolCalls: [{ name: 'list_dir', arguments: {} }] },
      { content: 'There are 0 files.' },
      { content: 'The sub-agent says there are no files.' },
    ]);
    const { events, outcome } = await collect(agent.runStream(options()));
    expect(outcome.text).toBe('The sub-agent says there are no files.');
    const forwarded = events.filter((e) => e.is_subagent === true);
    expect(forwarded.length).toBeGreaterThan(3);
    expect(forwarded[0]?.agent_path).toEqual(['default', 'researcher']);
    expect(forwarded.some((e) => e.type === 'tool_call' && e.name === 'list_dir')).toBe(true);
    const spawn = events.find((e) => e.type === 'tool_call' && e.name === 'spawn_agent' && e.is_subagent !== true);
    expect(spawn).toMatchObject({ ok: true, output: 'There are 0 files.' });
    const sub = [...store.rows.values()].find((s) => s.kind === 'subagent');
    expect(sub?.parentId).toBe('root');
    // The sub-agent's context lives in memory only; its messages are kept for the record.
    expect(store.view.get(sub?.id ?? '')).toBeUndefined();
    // Task, budget note, call, result, answer.
    expect(store.display.get(sub?.id ?? '')?.length).toBe(5);
  });

  it('reports a sub-agent that times out, and the parent carries on', async () => {
    // The sub-agent's model hangs forever: only its 1 s timeout can end it (else the test's hang guard).
    const { agent } = setup([{ toolCalls: [{ name: 'spawn_agent', arguments: { task: 'think forever', timeout_seconds: 1 } }] }, { hang: true }, { content: 'gave up on it' }]);
    const { events, outcome } = await collect(agent.runStream(options()));
    expect(outcome.text).toBe('gave up on it');
    const spawn = events.find((e) => e.type === 'tool_call' && e.name === 'spawn_agent' && e.is_subagent !== true);
    expect(spawn).toMatchObject({ ok: false });
    expect(spawn?.type === 'tool_call' && spawn.output).toMatch(/timed out after 1 s/);
  });

  it.each<[number | undefined, number]>([
    [undefined, 300],
    [0, 1],
    [1, 1],
    [600, 600],
    [3600, 3600],
    [1e9, 3600], // uncapped, AbortSignal.timeout threw (RangeError) past 2^32 ms
  ])('sub-agent timeout asked %s s → %s s', (asked, effective) => {
    expect(subagentTimeoutS(asked)).toBe(effective);
  });

  it('a huge timeout_seconds neither fires at once nor warns', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const { agent } = setup([{ toolCalls: [{ name: 'spawn_agent', arguments: { task: 'look', timeout_seconds: 1e9 } }] }, { content: 'seen' }, { content: 'done' }]);
      const { events } = await collect(agent.runStream(options()));
      const spawn = events.find((e) => e.type === 'tool_call' && e.name === 'spawn_agent' && e.is_subagent !== true);
      expect(spawn).toMatchObject({ ok: true });
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('runEphemeral returns [text, false] at the iteration limit, with session-aware tools on the parent', async () => {
    const store = new MemoryStore();
    await store.sessions.create({ id: 'parent', kind: 'chat', profile: 'default', cwd: '/', title: '', model: 'm' });
    const loop: ScriptedTurn = { toolCalls: [{ name: 'scratchpad', arguments: { action: 'write', key: 'k', value: 'v' } }] };
    const { agent } = setup([loop, loop, loop], store);
    const base = options();
    const { sessionId: _s, newSession: _n, message: _m, profileId: _p, signal, ...rest } = base;
    const [text, completed] = await agent.runEphemeral('loop', 'default', { parentSessionId: 'parent', maxIterations: 2, signal, base: rest, parentAgentPath: ['default'], depth: 1 });
    expect(completed).toBe(false);
    expect(typeof text).toBe('string');
    expect(await store.state.getScratchpad('parent')).toEqual([expect.objectContaining({ key: 'k', value: 'v' })]);
  });
});

describe('the tool ceiling: spawn_agent and switch_profile never widen the tools', () => {
  const toolsOf = (req: { tools?: Array<{ function: { name: string } }> } | undefined): string[] => req?.tools?.map((t) => t.function.name) ?? [];
  const WIDENING = ['shell', 'write_file', 'edit_file'];

  it('a researcher spawning a default sub-agent gives it no shell or writes, and says so', async () => {
    const { agent, llm } = setup([
      { toolCalls: [{ name: 'spawn_agent', arguments: { task: 'touch a file', profile_id: 'default' } }] },
      { toolCalls: [{ name: 'shell', arguments: { command: 'touch pwned' } }, { name: 'write_file', arguments: { path: 'pwned.txt', content: 'x' } }] },
      { content: 'could not' },
      { content: 'done' },
    ]);
    const opts = options({ profileId: 'researcher' });
    const { events } = await collect(agent.runStream(opts));
    const subTools = toolsOf(llm.requests[1]);
    expect(subTools).toContain('read_file');
    for (const t of WIDENING) expect(subTools).not.toContain(t);
    const subCalls = events.filter((e) => e.type === 'tool_call' && e.is_subagent === true);
    expect(subCalls.map((e) => e.type === 'tool_call' && e.ok)).toEqual([false, false]);
    expect(subCalls.every((e) => e.type === 'tool_call' && /unknown tool/.test(e.output))).toBe(true);
    expect(existsSync(`${opts.cwd}/pwned`) || existsSync(`${opts.cwd}/pwned.txt`)).toBe(false);
    const spawn = events.find((e) => e.type === 'tool_call' && e.name === 'spawn_agent' && e.is_subagent !== true);
    expect(spawn?.type === 'tool_call' && spawn.output).toMatch(/^\[sub-agent 'default' ran without write_file, edit_file, shell: .*\]\ncould not$/);
    const warning = events.find((e) => e.type === 'warning' && e.code === 'tools_dropped');
    expect(warning?.type === 'warning' && warning.message).toMatch(/sub-agent 'default' gets no write_file, edit_file, shell/);
  });

  it('nothing is dropped (and nothing said) when the parent has the tools', async () => {
    const { agent } = setup([{ toolCalls: [{ name: 'spawn_agent', arguments: { task: 'look', profile_id: 'researcher' } }] }, { content: 'seen' }, { content: 'done' }]);
    const { events } = await collect(agent.runStream(options()));
    const spawn = events.find((e) => e.type === 'tool_call' && e.name === 'spawn_agent' && e.is_subagent !== true);
    expect(spawn).toMatchObject({ ok: true, output: 'seen' });
    expect(events.some((e) => e.type === 'warning')).toBe(false);
  });

  it('switch_profile to a wider profile keeps the current tools, and switching back and forth never regains them', async () => {
    const researcher = profiles.profiles.get('researcher');
    if (!researcher) throw new Error('no researcher profile');
    const limited = {
      ...researcher,
      id: 'limited',
      settings: { ...researcher.settings, tools: { agent: [...researcher.settings.tools.agent, 'switch_profile'], subagent: researcher.settings.tools.subagent } },
    };
    const set = { ...profiles, profiles: new Map([...profiles.profiles, ['limited', limited]]) };
    const llm = new ScriptedLlm([
      { toolCalls: [{ name: 'switch_profile', arguments: { profile_id: 'default' } }] },
      { toolCalls: [{ name: 'shell', arguments: { command: 'echo hi' } }, { name: 'switch_profile', arguments: { profile_id: 'coder' } }] },
      { content: 'done' },
    ]);
    const agent = new Agent({ llm, store: Promise.resolve(new MemoryStore()), tools: registry, profiles: set });
    const { events } = await collect(agent.runStream(options({ profileId: 'limited' })));
    for (const req of llm.requests) for (const t of WIDENING) expect(toolsOf(req)).not.toContain(t);
    // The switch itself happened: default's prompt, and default's remember/forget dropped too.
    expect(llm.requests[1]?.messages[0]?.content).not.toBe(llm.requests[0]?.messages[0]?.content);
    expect(toolsOf(llm.requests[1])).toContain('switch_profile');
    const results = events.filter((e) => e.type === 'tool_call');
    expect(results[0]).toMatchObject({ ok: true });
    expect(results[0]?.type === 'tool_call' && results[0].output).toMatch(/^Switched to profile 'default' from the next step on, without write_file, edit_file, shell, remember, forget: /);
    expect(results[1]).toMatchObject({ ok: false, name: 'shell' });
    expect(events.filter((e) => e.type === 'warning' && e.code === 'tools_dropped')).toHaveLength(2);
  });
});

describe('switch_profile', () => {
  it('takes effect on the next model call: new tools and a new system prompt', async () => {
    const { agent, llm } = setup([{ toolCalls: [{ name: 'switch_profile', arguments: { profile_id: 'researcher' } }] }, { content: 'now read-only' }]);
    await collect(agent.runStream(options()));
    const before = llm.requests[0]?.tools?.map((t) => t.function.name) ?? [];
    const after = llm.requests[1]?.tools?.map((t) => t.function.name) ?? [];
    expect(before).toContain('write_file');
    expect(after).not.toContain('write_file');
    expect(llm.requests[1]?.messages[0]?.content).not.toBe(llm.requests[0]?.messages[0]?.content);
  });

  it('refuses an unknown profile as a result the model reads', async () => {
    const { agent } = setup([{ toolCalls: [{ name: 'switch_profile', arguments: { profile_id: 'nope' } }] }, { content: 'ok' }]);
    const { events } = await collect(agent.runStream(options()));
    expect(events.find((e) => e.type === 'tool_call')).toMatchObject({ ok: false });
  });
});

describe('long-term memory', () => {
  it('remembers a fact and injects it into the next run, at the end of the one system message', async () => {
    const store = new MemoryStore();
    const first = setup([{ toolCalls: [{ name: 'remember', arguments: { fact: 'The user prefers tabs.' } }] }, { content: 'noted' }], store);
    await collect(first.agent.runStream(options()));
    expect(store.memoryRows.map((m) => m.fact)).toEqual(['The user prefers tabs.']);
    const second = setup([{ content: 'hi' }], store);
    await collect(second.agent.runStream(options({ sessionId: 'other' })));
    const [system, task] = second.llm.requests[0]?.messages ?? [];
    expect(system?.role).toBe('system');
    expect(system?.content).toMatch(/\n---\n[\s\S]*\n\n## What I remember about the user\n[\s\S]*The user prefers tabs\./);
    expect(task?.role).toBe('user');
  });

  it('forgets by id', async () => {
    const store = new MemoryStore();
    const rec = await store.memories.add('local', 'fact', 'tool');
    const { agent } = setup([{ toolCalls: [{ name: 'forget', arguments: { id: rec.id } }] }, { content: 'ok' }], store);
    await collect(agent.runStream(options()));
    expect(store.memoryRows).toHaveLength(0);
  });

  it.each([
    ['["The user uses pnpm."]', ['The user uses pnpm.']],
    ['Here you go:\n```json\n["a", "b"]\n```', ['a', 'b']],
    ['[]', []],
    ['nothing new', []],
    ['[1, "x"]', ['x']],
  ])('parseFacts(%j)', (text, want) => {
    expect(parseFacts(text)).toEqual(want);
  });
});

describe('compression inside a turn', () => {
  it('compresses mid-turn when the estimate reaches 80% of num_ctx, archives what it replaced, and still answers', async () => {
    // Planner and summariser calls are the ones without reasoning (think: false).
    let toolTurns = 0;
    const llm = new ScriptedLlm((req) => {
      if (!req.think) return { content: 'Summary: wrote files f0..fN with 3000 x each.' };
      if (toolTurns < 8) {
        const n = toolTurns++;
        return { toolCalls: [{ name: 'write_file', arguments: { path: `f${n}.txt`, content: 'x'.repeat(3000) } }], promptTokens: 0 };
      }
      return { content: 'all written' };
    });
    const store = new MemoryStore();
    const agent = new Agent({ llm, store: Promise.resolve(store), tools: registry, profiles });
    const { events, outcome } = await collect(agent.runStream(options({ numCtx: 6000, numCtxExplicit: true })));
    expect(outcome).toMatchObject({ stopReason: 'completed', text: 'all written' });
    expect(events.some((e) => e.type === 'compression_started')).toBe(true);
    expect(events.some((e) => e.type === 'context_compressed')).toBe(true);
    expect(store.archiveRows.length).toBeGreaterThan(0);
    for (const req of llm.requests.filter((r) => r.think)) {
      const chars = JSON.stringify(req.messages).length + JSON.stringify(req.tools ?? []).length;
      expect(Math.ceil(chars / 3)).toBeLessThanOrEqual(6000);
    }
    // The display buffer keeps everything; the stored context is the compressed view.
    // (Task, the first call's budget note, 8 × call and result, the answer.)
    expect(store.display.get('root')).toHaveLength(19);
    expect((store.view.get('root') ?? []).length).toBeLessThan(19);
  });
});

describe('memory cache', () => {
  it('sends cached facts without waiting for the store, and refreshes the cache from it', async () => {
    const store = new MemoryStore();
    await store.memories.add('local', 'The user likes short answers.', 'tool');
    // The store opens only once the model has been called: an agent that waited for the store
    // before its first call would never get one (the hang guard below says so).
    let openStore: (s: MemoryStore) => void = () => undefined;
    const slowStore = new Promise<MemoryStore>((resolve) => (openStore = resolve));
    const hangGuard = setTimeout(() => openStore(store), 20_000);
    const entries = new Map<string, string[]>([['local', ['- stale fact (m_x)']]]);
    const cache = { get: (u: string) => entries.get(u), set: (u: string, lines: string[]) => void entries.set(u, lines) };
    let calledBeforeStore: boolean | undefined;
    const llm = new ScriptedLlm(() => {
      calledBeforeStore ??= true;
      openStore(store);
      return { content: 'ok' };
    });
    void slowStore.then(() => (calledBeforeStore ??= false));
    const agent = new Agent({ llm, store: slowStore, tools: registry, profiles, memoryCache: cache });
    await collect(agent.runStream(options()));
    clearTimeout(hangGuard);
    expect(calledBeforeStore, 'the first model call came before the store was open').toBe(true);
    expect(llm.requests[0]?.messages[0]?.content).toContain('stale fact');
    expect(entries.get('local')?.[0]).toContain('The user likes short answers.');
  });
});
