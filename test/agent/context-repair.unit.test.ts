import { describe, expect, it } from 'vitest';
import { UNANSWERED_RESULT, unansweredCalls } from '../../src/agent/context-repair.js';
import { capArgsForEvent } from '../../src/agent/event-caps.js';
import type { ChatMessage } from '../../src/llm/types.js';

const call = (name: string) => ({ name, arguments: {} });

describe('unansweredCalls', () => {
  it.each<[string, ChatMessage[], string[]]>([
    ['empty', [], []],
    ['ends with an answer', [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'a' }], []],
    ['all answered', [{ role: 'assistant', content: '', tool_calls: [call('a'), call('b')] }, { role: 'tool', content: 'r', tool_name: 'a' }, { role: 'tool', content: 'r', tool_name: 'b' }], []],
    ['none answered', [{ role: 'assistant', content: '', tool_calls: [call('a'), call('b')] }], ['a', 'b']],
    ['one of two answered', [{ role: 'assistant', content: '', tool_calls: [call('a'), call('b')] }, { role: 'tool', content: 'r', tool_name: 'a' }], ['b']],
  ])('%s', (_name, context, want) => {
    const out = unansweredCalls(context);
    expect(out.map((m) => m.tool_name)).toEqual(want);
    for (const m of out) expect(m).toMatchObject({ role: 'tool', content: UNANSWERED_RESULT });
  });

  it('each made-up result answers its call by id (tool_call_id), as Ollama pairs them', () => {
    const context: ChatMessage[] = [
      { role: 'assistant', content: '', tool_calls: [{ ...call('a'), id: 'call_x1' }, { ...call('b'), id: 'call_x2' }, call('c')] },
      { role: 'tool', content: 'r', tool_name: 'a', tool_call_id: 'call_x1' },
    ];
    expect(unansweredCalls(context).map((m) => [m.tool_name, m.tool_call_id])).toEqual([
      ['b', 'call_x2'],
      ['c', undefined],
    ]);
  });
});

describe('capArgsForEvent', () => {
  it('shortens long strings anywhere in the arguments and leaves the rest alone', () => {
    const big = 'x'.repeat(20_000);
    const out = capArgsForEvent({ path: 'a.txt', content: big, nested: [{ s: big }], n: 3 }) as Record<string, unknown>;
    expect(out.path).toBe('a.txt');
    expect(out.n).toBe(3);
    expect((out.content as string).length).toBeLessThan(5_000);
    expect(out.content).toContain('chars omitted');
    expect(JSON.stringify(out.nested).length).toBeLessThan(5_000);
  });

  it('returns small arguments unchanged', () => {
    expect(capArgsForEvent({ command: 'ls' })).toEqual({ command: 'ls' });
    expect(capArgsForEvent('{"bad json')).toBe('{"bad json');
  });
});
