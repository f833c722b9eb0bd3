import { describe, expect, it } from 'vitest';
import { prefixBreaks, prefixKept, prefixReuse, rendererFor, renderPrompt, renderSystem } from '../support/render-prompt.js';

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

describe('rendererFor: the renderer the fake picks by model name', () => {
  it.each([
    ['qwen3:8b', 'qwen3'],
    ['qwen3.5:9b', 'qwen3.5'],
    ['qwen3.5', 'qwen3.5'],
    ['library/qwen3.5:27b-q4_K_M', 'qwen3.5'],
    ['QWEN3.8:4b', 'qwen3.8'],
    ['glm-4.7:latest', 'glm-4.7'],
    ['glm-4.7-flash:q4', 'glm-4.7'],
    ['qwen3-coder:30b', 'qwen3'],
    ['llama3.1:8b', 'qwen3'],
    [undefined, 'qwen3'],
  ])('%s → %s', (model, want) => {
    expect(rendererFor(model)).toBe(want);
  });
});

/** model/renderers/qwen35.go 18-42, after `<tools>` and the tool lines. */
const QWEN35_POSTAMBLE_START = '\n</tools>\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n<tool_call>\n';

describe('the qwen3.5 renderer (model/renderers/qwen35.go)', () => {
  const q35 = (body: Body): string => renderPrompt({ model: 'qwen3.5:9b', ...body });
  const cases: Array<{ name: string; body: Body; want: string }> = [
    {
      name: 'system text trimmed, reply prefilled with <think>\\n (251-263, 348-356)',
      body: { messages: [system('  S \n'), user(' hi\n')] },
      want: '<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n',
    },
    {
      name: 'think:false prefills an empty think block (emitEmptyThinkOnNoThink)',
      body: { messages: [user('hi')], think: false },
      want: '<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n',
    },
    {
      name: 'a non-leading system message is rendered in place, not hoisted (292)',
      body: { messages: [system('A'), user('q'), system('note')] },
      want: '<|im_start|>system\nA<|im_end|>\n<|im_start|>user\nq<|im_end|>\n<|im_start|>system\nnote<|im_end|>\n<|im_start|>assistant\n<think>\n',
    },
    {
      name: 'consecutive user messages are not merged',
      body: { messages: [user('one'), user('two')] },
      want: '<|im_start|>user\none<|im_end|>\n<|im_start|>user\ntwo<|im_end|>\n<|im_start|>assistant\n<think>\n',
    },
    {
      name: 'thinking only after the last real query; a <tool_response> user message is not a query (268-281, 298)',
      body: {
        messages: [
          user('q1'),
          { role: 'assistant', content: 'a1', thinking: 't1' },
          user('q2'),
          { ...call('a'), thinking: ' t2 ' },
          user('<tool_response>\nx\n</tool_response>'),
        ],
      },
      want:
        '<|im_start|>user\nq1<|im_end|>\n<|im_start|>assistant\na1<|im_end|>\n<|im_start|>user\nq2<|im_end|>\n' +
        '<|im_start|>assistant\n<think>\nt2\n</think>\n\n<tool_call>\n<function=read_file>\n<parameter=path>\na\n</parameter>\n</function>\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\n<tool_response>\nx\n</tool_response><|im_end|>\n<|im_start|>assistant\n<think>\n',
    },
    {
      name: 'consecutive tool results share one user turn, each trimmed (335-342)',
      body: { messages: [user('q'), call('a'), tool(' A\n'), tool('B')] },
      want:
        '<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n<tool_call>\n<function=read_file>\n<parameter=path>\na\n</parameter>\n</function>\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\n<tool_response>\nA\n</tool_response>\n<tool_response>\nB\n</tool_response><|im_end|>\n<|im_start|>assistant\n<think>\n',
    },
    {
      name: 'content, then the calls after a blank line; arguments in sent order, objects as Go JSON (312-330)',
      body: {
        messages: [
          user('q'),
          { role: 'assistant', content: 'Writing.', tool_calls: [{ function: { name: 'w', arguments: { z: 1, a: { y: 2, b: '<' } } } }, { function: { name: 'v', arguments: {} } }] },
          tool('ok'),
        ],
      },
      want:
        '<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nWriting.\n\n<tool_call>\n<function=w>\n<parameter=z>\n1\n</parameter>\n' +
        '<parameter=a>\n{"b":"\\u003c","y":2}\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=v>\n</function>\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\n<tool_response>\nok\n</tool_response><|im_end|>\n<|im_start|>assistant\n<think>\n',
    },
    {
      name: 'a final assistant message is a prefill: no <|im_end|>, no new turn (290, 332)',
      body: { messages: [user('q'), { role: 'assistant', content: 'partial' }] },
      want: '<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\npartial',
    },
  ];
  it.each(cases)('$name', ({ body, want }) => {
    expect(q35(body)).toBe(want);
  });

  it('puts the tools BEFORE the system text, in one system turn, as JSON with spaces (229-250, json.go)', () => {
    const prompt = q35({ messages: [system(' S '), user('q')], tools: [READ_FILE] });
    expect(prompt).toBe(
      '<|im_start|>system\n# Tools\n\nYou have access to the following functions:\n\n<tools>\n' +
        '{"type": "function", "function": {"name": "read_file", "description": "Read a file", "parameters": {"type": "object", "required": ["path"], ' +
        '"properties": {"path": {"type": "string", "description": "the path"}}}}}' +
        prompt.slice(prompt.indexOf(QWEN35_POSTAMBLE_START), prompt.indexOf('</IMPORTANT>') + '</IMPORTANT>'.length) +
        '\n\nS<|im_end|>\n<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>\n',
    );
    expect(prompt).toContain(QWEN35_POSTAMBLE_START);
    expect(renderSystem({ model: 'qwen3.5:9b', messages: [system('S'), user('q')], tools: [READ_FILE] })).toMatch(/^<\|im_start\|>system\n# Tools[^]*\n\nS<\|im_end\|>\n$/u);
  });

  it('keeps tool properties in the order sent (ToolPropertiesMap), unlike the Go template', () => {
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { b: { type: 'string' }, a: { type: 'integer' } } } } }];
    expect(q35({ messages: [user('q')], tools })).toContain('{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "integer"}}}}}');
  });
});

describe('the Qwen3.8 variant (qwen35.go 61-69, 113-200)', () => {
  const q38 = (body: Body): string => renderPrompt({ model: 'qwen3.8:4b', ...body });
  it('folds every system message into one leading turn and renders every turn\'s thinking', () => {
    expect(q38({ messages: [system('A'), user('q1'), { role: 'assistant', content: 'a1', thinking: 't1' }, system('B'), user('q2')] })).toBe(
      '<|im_start|>system\nA\n\nB<|im_end|>\n<|im_start|>user\nq1<|im_end|>\n<|im_start|>assistant\n<think>\nt1\n</think>\n\na1<|im_end|>\n' +
        '<|im_start|>user\nq2<|im_end|>\n<|im_start|>assistant\n<think>\n',
    );
  });

  it('prints the reasoning-effort line for "low" and "high", none for true ("medium")', () => {
    expect(q38({ messages: [system('S'), user('q')], think: 'low' })).toMatch(/^<\|im_start\|>system\nReasoning effort is set to low\. [^\n]*\n\nS<\|im_end\|>\n/u);
    expect(q38({ messages: [user('q')], think: 'high' })).toMatch(/^<\|im_start\|>system\nReasoning effort is set to xhigh\. [^\n]*<\|im_end\|>\n<\|im_start\|>user\nq/u);
    expect(q38({ messages: [user('q')] })).toBe('<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>\n');
  });

  it('refuses a request without a user query, as the server does (500)', () => {
    expect(() => q38({ messages: [system('S'), user('<tool_response>\nx\n</tool_response>')] })).toThrow('no user query found in messages');
  });
});

describe('the GLM-4.7 renderer, which keeps thinking (model/renderers/glm47.go)', () => {
  const glm = (body: Body): string => renderPrompt({ model: 'glm-4.7', ...body });
  const cases: Array<{ name: string; body: Body; want: string }> = [
    {
      name: 'system in place, content untrimmed, reply opened with <think> (48, 73-75, 100-111)',
      body: { messages: [system(' S '), user('hi ')] },
      want: '[gMASK]<sop><|system|> S <|user|>hi <|assistant|><think>',
    },
    {
      name: 'thinking is PRESERVED: an earlier turn keeps it after a new user message (34-38, 77-80)',
      body: { messages: [user('q1'), { role: 'assistant', content: 'a1', thinking: 't1' }, user('q2')] },
      want: '[gMASK]<sop><|user|>q1<|assistant|><think>t1</think>a1<|user|>q2<|assistant|><think>',
    },
    {
      name: 'a turn without thinking renders as </think>; think:false opens the reply with </think> (80-82, 107-111)',
      body: { messages: [user('q1'), { role: 'assistant', content: 'a1' }, user('q2')], think: false },
      want: '[gMASK]<sop><|user|>q1<|assistant|></think>a1<|user|>q2<|assistant|></think>',
    },
    {
      name: 'calls as <arg_key>/<arg_value> in sent order; consecutive results share one <|observation|> (86-99, 116-136)',
      body: {
        messages: [
          user('q'),
          { role: 'assistant', content: '', thinking: 't', tool_calls: [{ function: { name: 'read_file', arguments: { path: 'a', n: 2, o: { y: 1, b: true } } } }] },
          tool('A'),
          tool('B'),
        ],
      },
      want:
        '[gMASK]<sop><|user|>q<|assistant|><think>t</think><tool_call>read_file<arg_key>path</arg_key><arg_value>a</arg_value>' +
        '<arg_key>n</arg_key><arg_value>2</arg_value><arg_key>o</arg_key><arg_value>{"b":true,"y":1}</arg_value></tool_call>' +
        '<|observation|><tool_response>A</tool_response><tool_response>B</tool_response><|assistant|><think>',
    },
  ];
  it.each(cases)('$name', ({ body, want }) => {
    expect(glm(body)).toBe(want);
  });

  it('puts the tools first, as JSON with spaces, in a <|system|> block of their own (50-64)', () => {
    expect(renderSystem({ model: 'glm-4.7', messages: [system('S'), user('q')], tools: [READ_FILE] })).toBe(
      '[gMASK]<sop><|system|>\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
        'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' +
        '{"type": "function", "function": {"name": "read_file", "description": "Read a file", "parameters": {"type": "object", "required": ["path"], ' +
        '"properties": {"path": {"type": "string", "description": "the path"}}}}}\n</tools>\n\n' +
        'For each function call, output the function name and arguments within the following XML format:\n' +
        '<tool_call>{function-name}<arg_key>{arg-key-1}</arg_key><arg_value>{arg-value-1}</arg_value><arg_key>{arg-key-2}</arg_key><arg_value>{arg-value-2}</arg_value>...</tool_call>',
    );
  });
});
