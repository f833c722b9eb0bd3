import { describe, expect, it } from 'vitest';
import { prefixBreaks, prefixKept, prefixReuse, renderPrompt, renderSystem } from '../support/render-prompt.js';

type Body = Record<string, unknown>;
const user = (content: string): Body => ({ role: 'user', content });
const system = (content: string): Body => ({ role: 'system', content });
const tool = (content: string): Body => ({ role: 'tool', content, tool_name: 'read_file' });
const call = (path: string, thinking = ''): Body => ({
  role: 'assistant',
  content: '',
  thinking,
  tool_calls: [{ function: { name: 'read_file', arguments: { path } } }],
});
const READ_FILE = {
  type: 'function',
  function: {
    name: 'read_file',
    description: 'Read a file',
    parameters: { type: 'object', required: ['path'], properties: { path: { type: 'string', description: 'the path' } } },
  },
};

describe('renderPrompt: collate and the qwen3 template', () => {
  const cases: Array<{ name: string; body: Body; want: string }> = [
    {
      name: 'system at the top, generation prompt, /think on the last user message',
      body: { messages: [system('S'), user('hi')] },
      want: '<|im_start|>system\n\nS<|im_end|>\n<|im_start|>user\nhi /think<|im_end|>\n<|im_start|>assistant\n',
    },
    {
      name: 'think:false: /no_think and an empty think block after the generation prompt',
      body: { messages: [user('hi')], think: false },
      want: '<|im_start|>user\nhi /no_think<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n',
    },
    {
      name: 'consecutive user messages merge with a blank line',
      body: { messages: [user('one'), user('two')] },
      want: '<|im_start|>user\none\n\ntwo /think<|im_end|>\n<|im_start|>assistant\n',
    },
    {
      name: 'all system messages are hoisted and joined, wherever they stand',
      body: { messages: [system('A'), user('u'), system('B')] },
      want: '<|im_start|>system\n\nA\n\nB<|im_end|>\n<|im_start|>user\nu /think<|im_end|>\n<|im_start|>assistant\n',
    },
    {
      name: 'tool messages are not merged; tool calls render as <tool_call> JSON; thinking after the last user is kept',
      body: { messages: [user('do'), call('a', 'plan'), tool('A'), tool('B')] },
      want:
        '<|im_start|>user\ndo /think<|im_end|>\n<|im_start|>assistant\n<think>plan</think>\n<tool_call>\n' +
        '{"name": "read_file", "arguments": {"path":"a"}}\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\n<tool_response>\nA\n</tool_response><|im_end|>\n' +
        '<|im_start|>user\n<tool_response>\nB\n</tool_response><|im_end|>\n<|im_start|>assistant\n',
    },
    {
      name: 'thinking before the last user message is dropped',
      body: { messages: [user('q1'), { role: 'assistant', content: 'a1', thinking: 'old' }, user('q2')] },
      want: '<|im_start|>user\nq1<|im_end|>\n<|im_start|>assistant\na1<|im_end|>\n<|im_start|>user\nq2 /think<|im_end|>\n<|im_start|>assistant\n',
    },
    {
      name: 'a final assistant message stays open (prefill)',
      body: { messages: [user('q'), { role: 'assistant', content: 'partial' }] },
      want: '<|im_start|>user\nq /think<|im_end|>\n<|im_start|>assistant\npartial',
    },
    {
      name: 'content wins over tool calls; a merged second assistant message loses its calls',
      body: { messages: [user('q'), { ...call('a'), content: 'text' }, call('b')] },
      want: '<|im_start|>user\nq /think<|im_end|>\n<|im_start|>assistant\ntext\n\n',
    },
    {
      name: '<think> is cut from older assistant content (filterThinkTags); roles are lower-cased',
      body: { messages: [{ role: 'USER', content: 'q1' }, { role: 'assistant', content: '<think>x</think>\n\nreply' }, user('q2')] },
      want: '<|im_start|>user\nq1<|im_end|>\n<|im_start|>assistant\nreply<|im_end|>\n<|im_start|>user\nq2 /think<|im_end|>\n<|im_start|>assistant\n',
    },
    {
      name: 'arguments are a Go map: sorted keys, HTML characters escaped',
      body: { messages: [user('q'), { role: 'assistant', content: '', tool_calls: [{ function: { name: 'w', arguments: { z: 1, a: '<&>' } } }] }, tool('ok')] },
      want:
        '<|im_start|>user\nq /think<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{"name": "w", "arguments": {"a":"\\u003c\\u0026\\u003e","z":1}}\n' +
        '</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\nok\n</tool_response><|im_end|>\n<|im_start|>assistant\n',
    },
  ];
  it.each(cases)('$name', ({ body, want }) => {
    expect(renderPrompt(body)).toBe(want);
  });

  it('a trailing system message changes the start of the prompt, not its end', () => {
    const base = { messages: [system('You are navi.'), user('fix the bug')] };
    const withReminder = { messages: [...base.messages, system('reminder: 3 turns left')] };
    const before = renderPrompt(base);
    const after = renderPrompt(withReminder);
    expect(before.startsWith('<|im_start|>system\n\nYou are navi.<|im_end|>')).toBe(true);
    expect(after.startsWith('<|im_start|>system\n\nYou are navi.\n\nreminder: 3 turns left<|im_end|>')).toBe(true);
    expect(after.startsWith(before.slice(0, 40))).toBe(false);
    // The user turn is no longer the last message, yet the generation prompt is still emitted.
    expect(after.endsWith('fix the bug /think<|im_end|>\n<|im_start|>assistant\n')).toBe(true);
  });

  it('puts the tools into the system block, after .System', () => {
    const body = { messages: [system('S'), user('q')], tools: [READ_FILE] };
    const header = renderSystem(body);
    expect(header).toBe(
      '<|im_start|>system\n\nS\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
        'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' +
        '{"type": "function", "function": {"name":"read_file","description":"Read a file","parameters":' +
        '{"type":"object","required":["path"],"properties":{"path":{"type":"string","description":"the path"}}}}}\n' +
        '</tools>\n\nFor each function call, return a json object with function name and arguments within ' +
        '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n' +
        '</tool_call><|im_end|>\n',
    );
    expect(renderPrompt(body).startsWith(header)).toBe(true);
    expect(renderSystem({ messages: [user('q')] })).toBe('');
  });

  it('renders tool properties in Go order: top-level keys sorted, unknown fields dropped', () => {
    const tools = [
      {
        type: 'function',
        function: {
          parameters: { properties: { b: { description: 'B', type: 'string', default: 'x' }, a: { type: ['string', 'null'] } }, type: 'object' },
          name: 'f',
        },
      },
    ];
    expect(renderSystem({ messages: [], tools })).toContain(
      '{"name":"f","description":"","parameters":{"type":"object","properties":{"a":{"type":["string","null"]},"b":{"type":"string","description":"B"}}}}',
    );
  });
});

describe('prefixBreaks, prefixReuse and prefixKept', () => {
  const tools = [READ_FILE];
  const sys = system('You are navi.');
  const growing: Body[] = [
    { model: 'qwen3:8b', tools, messages: [sys, user('read a and b')] },
    { model: 'qwen3:8b', tools, messages: [sys, user('read a and b'), call('a', 'first a'), tool('A')] },
    { model: 'qwen3:8b', tools, messages: [sys, user('read a and b'), call('a', 'first a'), tool('A'), call('b', 'then b'), tool('B')] },
  ];

  it('finds no break in a well-formed growing tool loop', () => {
    expect(prefixBreaks(growing)).toEqual([]);
  });

  it('finds a break at the top when a system reminder changes on every request', () => {
    const withReminders = growing.map((body, i) => ({
      ...body,
      messages: [...(body.messages as Body[]), system(`turn ${i}: ${3 - i} turns left`)],
    }));
    const breaks = prefixBreaks(withReminders);
    expect(breaks).toHaveLength(2);
    expect(breaks[0]).toMatch(/^request 0 → 1: prompt differs at char 40 of \d+: /);
    expect(breaks[0]).toContain('turn 0: 3 turns left');
    expect(breaks[0]).toContain('turn 1: 2 turns left');
  });

  it('reports that a new user message breaks the prefix (the /think toggle and dropped thinking)', () => {
    const next = { ...growing[2], messages: [...(growing[2]?.messages as Body[]), { role: 'assistant', content: 'done' }, user('now c')] };
    const breaks = prefixBreaks([growing[2] ?? {}, next]);
    expect(breaks).toHaveLength(1);
    expect(breaks[0]).toContain('read a and b /think');
  });

  it('gives the share of the next prompt that the previous one covers', () => {
    const [first, second] = [renderPrompt(growing[0] ?? {}), renderPrompt(growing[1] ?? {})];
    expect(prefixReuse(growing[0] ?? {}, growing[1] ?? {})).toBeCloseTo(first.length / second.length, 10);
    const changed = { ...growing[1], messages: [system('You are navi. Time: 12:01'), ...(growing[1]?.messages as Body[]).slice(1)] };
    expect(prefixReuse(growing[0] ?? {}, changed)).toBeLessThan(0.1);
    expect(prefixReuse(growing[1] ?? {}, growing[1] ?? {})).toBe(1);
  });

  it('gives the share of the previous prompt, without its last message, that the next one keeps', () => {
    // A growing loop keeps all of it, though the next prompt is longer (prefixReuse < 1).
    expect(prefixKept(growing[0] ?? {}, growing[1] ?? {})).toBe(1);
    expect(prefixKept(growing[1] ?? {}, growing[2] ?? {})).toBe(1);
    expect(prefixReuse(growing[1] ?? {}, growing[2] ?? {})).toBeLessThan(1);
    // A per-call reminder appended to the last tool result is not repeated, and costs nothing.
    const messages1 = growing[1]?.messages as Body[];
    const noted = { ...growing[1], messages: [...messages1.slice(0, -1), tool('A\n\nreminder: 2 turns left')] };
    expect(prefixKept(noted, growing[2] ?? {})).toBe(1);
    // A trailing user note moves the /think toggle off the task (and drops the thinking before
    // it), so the next request differs inside the task message.
    const trailing = { ...growing[1], messages: [...messages1, user('reminder: 2 turns left')] };
    const task = renderPrompt(trailing).indexOf('read a and b') + 'read a and b'.length;
    expect(prefixKept(trailing, growing[2] ?? {})).toBeCloseTo(task / renderPrompt(trailing).indexOf('<|im_start|>user\nreminder'), 10);
    // A reminder hoisted into the system block breaks the prompt near its top (after "You are navi.\n\n").
    const hoisted = { ...growing[1], messages: [...messages1, system('reminder: 2 turns left')] };
    // (The last message, a system one, prints only the generation prompt at the end.)
    const stable = renderPrompt(hoisted).length - '<|im_start|>assistant\n'.length;
    expect(prefixKept(hoisted, growing[2] ?? {})).toBeCloseTo('<|im_start|>system\n\nYou are navi.\n\n'.length / stable, 10);
    expect(prefixBreaks([hoisted, growing[2] ?? {}])).toHaveLength(1);
    expect(prefixKept({ model: 'm' }, growing[0] ?? {})).toBe(1);
  });
});
