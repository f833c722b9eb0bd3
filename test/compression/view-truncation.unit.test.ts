import { describe, expect, it } from 'vitest';
import { headTail, truncateForView, truncationMarker, viewBudget } from '../../src/agent/compression/index.js';
import { charsToTokens, messageChars } from '../../src/agent/tokens.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { call, reply, result, text, user } from './helpers.js';

const MARKER = /\n\[…truncated ~(\d+) tokens…\]\n/;

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null) {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

describe('viewBudget', () => {
  it.each([
    [65536, 0, 10922],
    [4096, 0, 682],
    [4096, -5, 682],
    [4096, 1500, 1500],
  ])('viewBudget(%i, %i) = %i', (numCtx, configured, expected) => {
    expect(viewBudget(numCtx, configured)).toBe(expected);
  });
});

describe('truncateForView', () => {
  const budget = 200; // tokens → 600 chars

  it('returns a new array of the same objects when nothing is over budget', () => {
    const msgs = [user('a'), call('shell'), result('shell', text(500)), reply('b')];
    const view = truncateForView(msgs, budget);
    expect(view).not.toBe(msgs);
    view.forEach((m, i) => expect(m).toBe(msgs[i]));
  });

  it('cuts a large tool result head+tail with the exact marker, within the budget', () => {
    const big = text(9000, 'T');
    const msgs = [user('go'), call('shell'), result('shell', big), reply('done')];
    const view = truncateForView(msgs, budget);
    const cut = view[2] as ChatMessage;
    expect(cut).not.toBe(msgs[2]);
    expect(cut.role).toBe('tool');
    expect(cut.tool_name).toBe('shell');
    const match = MARKER.exec(cut.content);
    expect(match).not.toBeNull();
    const [head, tail] = cut.content.split(MARKER.exec(cut.content)?.[0] ?? '');
    expect(big.startsWith(head ?? '')).toBe(true);
    expect(big.endsWith(tail ?? '')).toBe(true);
    expect((head ?? '').length).toBeGreaterThan(100);
    expect((tail ?? '').length).toBeGreaterThan(100);
    // N is the tokens removed.
    const removed = big.length - (head ?? '').length - (tail ?? '').length;
    expect(Number(match?.[1])).toBe(charsToTokens(removed));
    expect(charsToTokens(messageChars(cut))).toBeLessThanOrEqual(budget);
    // Neighbours untouched.
    expect(view[0]).toBe(msgs[0]);
    expect(view[3]).toBe(msgs[3]);
  });

  const never: [string, ChatMessage][] = [
    ['user', user(text(9000))],
    ['system', { role: 'system', content: text(9000) }],
  ];
  it.each(never)('never cuts a %s message', (_role, m) => {
    expect(truncateForView([m], budget)[0]).toBe(m);
  });

  it('cuts a long assistant reply', () => {
    const m = reply(text(5000, 'R'));
    const out = truncateForView([m], budget)[0] as ChatMessage;
    expect(out.content).toMatch(MARKER);
    expect(charsToTokens(messageChars(out))).toBeLessThanOrEqual(budget);
  });

  it('cuts the long string arguments of a tool call, keeping the short ones and the call ids', () => {
    const m: ChatMessage = {
      role: 'assistant',
      content: 'writing it',
      tool_calls: [{ id: 'c1', name: 'write_file', arguments: { path: 'src/big.ts', content: text(12000, 'W') } }],
    };
    const out = truncateForView([m], budget)[0] as ChatMessage;
    const args = out.tool_calls?.[0]?.arguments as Record<string, string>;
    expect(out.tool_calls?.[0]?.id).toBe('c1');
    expect(args.path).toBe('src/big.ts');
    expect(args.content).toMatch(MARKER);
    expect(out.content).toBe('writing it');
    expect(charsToTokens(messageChars(out))).toBeLessThanOrEqual(budget);
    // The original call is untouched.
    expect((m.tool_calls?.[0]?.arguments as Record<string, string>).content).toHaveLength(12000);
  });

  it('never mutates stored history (deep-frozen input)', () => {
    const msgs = deepFreeze<ChatMessage[]>([
      user('go'),
      { role: 'assistant', content: text(4000), tool_calls: [{ name: 'write_file', arguments: { path: 'a', content: text(8000) } }] },
      result('write_file', text(9000)),
    ]);
    const before = JSON.stringify(msgs);
    const view = truncateForView(msgs, budget);
    expect(JSON.stringify(msgs)).toBe(before);
    expect(view[1]?.content).toMatch(MARKER);
    expect(view[2]?.content).toMatch(MARKER);
  });

  it('returns the very same copy on every call (memoised; the request prefix stays byte-stable)', () => {
    const msgs = [user('go'), call('shell'), result('shell', text(9000))];
    const a = truncateForView(msgs, budget);
    const b = truncateForView(msgs, budget);
    expect(b[2]).toBe(a[2]);
    // A different budget is a different verdict.
    const c = truncateForView(msgs, budget * 2);
    expect(c[2]).not.toBe(a[2]);
    expect((c[2] as ChatMessage).content.length).toBeGreaterThan((a[2] as ChatMessage).content.length);
  });

  it('is disabled by a budget of 0', () => {
    const msgs = [result('shell', text(9000))];
    expect(truncateForView(msgs, 0)[0]).toBe(msgs[0]);
  });
});

describe('headTail', () => {
  it.each([10, 50, 100, 999])('fits %i chars when over', (max) => {
    const s = text(1000);
    const out = headTail(s, max);
    if (max >= 40) expect(out.length).toBeLessThanOrEqual(max);
    expect(out).toContain('[…truncated ~');
  });

  it('leaves short text alone', () => {
    expect(headTail('short', 10)).toBe('short');
  });

  it('never splits a surrogate pair', () => {
    const s = '😀'.repeat(500);
    const out = headTail(s, 201);
    expect(out).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  });

  it('spells the marker exactly', () => {
    expect(truncationMarker(42)).toBe('[…truncated ~42 tokens…]');
  });
});
