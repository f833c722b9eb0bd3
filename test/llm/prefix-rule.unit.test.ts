/**
 * The checker of the prefix rule (test/support/prefix-rule.ts): request N's whole rendered prompt,
 * less its last 4 tokens, is a prefix of request N+1's — on each renderer the fake has. It must
 * pass a well-formed append-only tool loop and fail (saying where) on anything that changes what
 * was sent: the rule is not vacuous.
 */
import { describe, expect, it } from 'vitest';
import { approximateTokens, conversations, prefixRuleBreaks, withoutLastTokens } from '../support/prefix-rule.js';
import { prefixBreaks, RENDERERS, renderPrompt, type RendererName } from '../support/render-prompt.js';

type Body = Record<string, unknown>;
const system = (content: string): Body => ({ role: 'system', content });
const user = (content: string): Body => ({ role: 'user', content });
const tool = (content: string): Body => ({ role: 'tool', content, tool_name: 'read_file' });
const call = (path: string, thinking: string): Body => ({
  role: 'assistant',
  content: '',
  thinking,
  tool_calls: [{ function: { name: 'read_file', arguments: { path } } }],
});
const READ_FILE = {
  type: 'function',
  function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object', required: ['path'], properties: { path: { type: 'string' } } } },
};
const MODEL: Record<RendererName, string> = { qwen3: 'qwen3:8b', 'qwen3.5': 'qwen3.5:9b', 'qwen3.8': 'qwen3.8:4b', 'glm-4.7': 'glm-4.7' };
const THE_THREE: RendererName[] = ['qwen3', 'qwen3.5', 'glm-4.7'];

/** A tool loop of one turn, every request repeating the one before and adding a call and its result. */
function toolLoop(model: string): Body[] {
  const sys = system('You are navi.');
  const steps = [sys, user('read a, b and c')];
  const bodies: Body[] = [{ model, tools: [READ_FILE], messages: [...steps] }];
  for (const [path, thinking] of [['a', 'First a.'], ['b', 'Then b.'], ['c', 'Last c.']] as const) {
    steps.push(call(path, thinking), tool(`contents of ${path}`));
    bodies.push({ model, tools: [READ_FILE], messages: [...steps] });
  }
  return bodies;
}

describe('approximateTokens', () => {
  it.each([
    ['<|im_start|>assistant\n<think>\n', ['<|im_start|>', 'assistant', '\n', '<think>', '\n']],
    ['</tool_response><|im_end|>\n', ['</tool_response>', '<|im_end|>', '\n']],
    ['B</tool_response><|assistant|><think>', ['B', '</tool_response>', '<|assistant|>', '<think>']],
    ['[gMASK]<sop><|user|>hi', ['[gMASK]', '<sop>', '<|user|>', 'hi']],
    ['Hello world, 123!', ['Hello', ' world', ',', ' ', '1', '2', '3', '!']],
    ["it's  done\n\n", ['it', "'s", ' ', ' done', '\n\n']],
  ])('%j', (text, want) => {
    expect(approximateTokens(text)).toEqual(want);
  });

  it('loses nothing: the tokens join to the text', () => {
    const text = renderPrompt(toolLoop('qwen3.5:9b').at(-1) ?? {});
    expect(approximateTokens(text).join('')).toBe(text);
  });

  it('withoutLastTokens cuts the generation prompt of each renderer', () => {
    const body = toolLoop('x').at(-1) ?? {};
    expect(renderPrompt(body, 'qwen3').slice(withoutLastTokens(renderPrompt(body, 'qwen3')).length)).toBe('\n<|im_start|>assistant\n');
    expect(renderPrompt(body, 'qwen3.5').slice(withoutLastTokens(renderPrompt(body, 'qwen3.5')).length)).toBe('assistant\n<think>\n');
    expect(renderPrompt(body, 'glm-4.7').slice(withoutLastTokens(renderPrompt(body, 'glm-4.7')).length)).toBe(' c</tool_response><|assistant|><think>');
    expect(withoutLastTokens('a b')).toBe('');
  });
});

describe('prefixRuleBreaks', () => {
  it.each(RENDERERS)('%s: an append-only tool loop keeps the whole previous prompt', (renderer) => {
    const bodies = toolLoop(MODEL[renderer]);
    expect(prefixRuleBreaks(bodies)).toEqual([]);
    expect(prefixBreaks(bodies)).toEqual([]);
  });

  it.each(THE_THREE)('%s: a deliberately changed earlier message fails, naming the message and both texts', (renderer) => {
    const bodies = toolLoop(MODEL[renderer]);
    const third = bodies[2] ?? {};
    const messages = [...(third.messages as Body[])];
    messages[3] = tool('other contents of a');
    bodies[2] = { ...third, messages };
    const breaks = prefixRuleBreaks(bodies, { label: 'unit' });
    expect(breaks).toHaveLength(2);
    expect(breaks[0]).toMatch(new RegExp(`^unit: request 1 → 2 \\(${renderer.replace('.', '\\.')}\\): request N's prompt less its last 4 tokens`, 'u'));
    expect(breaks[0]).toContain("in N's message 3 (tool: \"contents of a\") and N+1's message 3 (tool: \"other contents of a\")");
    expect(breaks[0]).toContain('messages: message 3 (tool) changed: content was "contents of a", now "other contents of a"');
    // The old rule (N without its last message) does not see it: only the whole-prompt rule does.
    expect(prefixBreaks(bodies.slice(1, 3))).toEqual([]);
    expect(breaks[1]).toMatch(/^unit: request 2 → 3 /u);
  });

  it.each(THE_THREE)('%s: a per-call note appended to a copy of the last result and dropped next call fails', (renderer) => {
    const bodies = toolLoop(MODEL[renderer]).map((body) => {
      const messages = [...(body.messages as Body[])];
      const last = messages.at(-1);
      if (last?.role === 'tool') messages[messages.length - 1] = { ...last, content: `${String(last.content)}\n\n[Iteration 2 of 40: 38 left.]` };
      return { ...body, messages };
    });
    const breaks = prefixRuleBreaks(bodies);
    expect(breaks).toHaveLength(2);
    expect(breaks[0]).toContain('messages: message 3 (tool) changed: content was "contents of a\\n\\n[Iteration 2 of 40: 38 left.]", now "contents of a"');
    expect(prefixBreaks(bodies)).toEqual([]);
  });

  it('a new user turn: GLM-4.7 must find every earlier turn as sent, thinking included', () => {
    const [, , , last] = toolLoop(MODEL['glm-4.7']);
    const sent = last?.messages as Body[];
    const kept = { ...last, messages: [...sent, { role: 'assistant', content: 'Read all three.', thinking: 'Done.' }, user('now d')] };
    expect(prefixRuleBreaks([last ?? {}, kept])).toEqual([]);
    const dropped = { ...kept, messages: (kept.messages).map(({ thinking: _t, ...m }) => m) };
    const breaks = prefixRuleBreaks([last ?? {}, dropped]);
    expect(breaks).toHaveLength(1);
    expect(breaks[0]).toContain('<|assistant|><think>First a.</think>');
    expect(breaks[0]).toContain('<|assistant|></think><tool_call>read_file');
    expect(breaks[0]).toContain('messages: message 2 (assistant) changed: thinking was "First a.", now absent');
  });

  it.each(['qwen3', 'qwen3.5'] as const)(
    '%s: a new user turn the template itself re-renders is excused only when every message sent before is repeated unchanged',
    (renderer) => {
      const [, , , last] = toolLoop(MODEL[renderer]);
      const sent = last?.messages as Body[];
      const next = { ...last, messages: [...sent, { role: 'assistant', content: 'Read all three.', thinking: 'Done.' }, user('now d')] };
      // The template drops the earlier thinking (and qwen3 moves ` /think`): the render breaks…
      expect(renderPrompt(next).startsWith(withoutLastTokens(renderPrompt(last ?? {})))).toBe(false);
      // …and SPEC §8 excuses it, since navi sent everything back as it was.
      expect(prefixRuleBreaks([last ?? {}, next])).toEqual([]);
      // Not when navi itself dropped the thinking from what it sends.
      const dropped = { ...next, messages: (next.messages).map(({ thinking: _t, ...m }) => m) };
      expect(prefixRuleBreaks([last ?? {}, dropped])[0]).toContain('messages: message 2 (assistant) changed: thinking was "First a.", now absent');
      // Nor is a tool-result-only continuation a new turn.
      const notATurn = { ...last, messages: [...sent.slice(0, -1), tool('other')] };
      expect(prefixRuleBreaks([last ?? {}, notATurn])).toHaveLength(1);
    },
  );

  it('a change of model between two requests is a break', () => {
    const [first, second] = toolLoop('qwen3:8b');
    expect(prefixRuleBreaks([first ?? {}, { ...second, model: 'glm-4.7' }])[0]).toContain('the model changed from qwen3:8b to glm-4.7');
  });

  it('renderer overrides the choice by model name', () => {
    const bodies = toolLoop('qwen3:8b');
    const changed = { ...bodies[1], messages: [system('You are navi, v2.'), ...(bodies[1]?.messages as Body[]).slice(1)] };
    expect(prefixRuleBreaks([bodies[0] ?? {}, changed], { renderer: 'qwen3.5' })[0]).toMatch(/\(qwen3\.5\): .*in N's message 0 \(system/u);
    expect(prefixRuleBreaks([bodies[0] ?? {}, changed])[0]).toMatch(/\(qwen3\): .*in N's header \(system text and tools\)/u);
  });
});

describe('conversations', () => {
  it('groups requests by system message and first user message, in order', () => {
    const a = toolLoop('qwen3:8b');
    const sub = [{ messages: [system('You are a researcher.'), user('look at a')] }, { messages: [system('You are a researcher.'), user('look at a'), call('a', ''), tool('A')] }];
    const helper = { messages: [system('Summarise.'), user('read a, b and c')] };
    const groups = conversations([a[0] ?? {}, a[1] ?? {}, sub[0] ?? {}, helper, sub[1] ?? {}, a[2] ?? {}]);
    expect(groups).toEqual([[a[0], a[1], a[2]], [sub[0], sub[1]], [helper]]);
  });
});
