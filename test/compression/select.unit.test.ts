import { describe, expect, it } from 'vitest';
import { selectForCompression, SUMMARY_ACK, summaryHeader, wouldCompress, type SelectOptions } from '../../src/agent/compression/index.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { call, reply, result, text, user } from './helpers.js';

const summary: ChatMessage = { role: 'user', content: `${summaryHeader(12)}\nTask: fix the tests.` };
const ack: ChatMessage = { role: 'assistant', content: SUMMARY_ACK };
const pairs = (n: number): ChatMessage[] => Array.from({ length: n }, (_, i) => [user(`q${i}`), reply(`a${i}`)]).flat();

interface Case {
  name: string;
  context: ChatMessage[];
  keep: number;
  options?: SelectOptions;
  /** Expected older length, or null for "nothing to compress". */
  older: number | null;
}

const cases: Case[] = [
  { name: 'plain turns: the last keep messages stay', context: pairs(7), keep: 4, older: 10 },
  {
    name: 'boundary inside a tool group moves back to the call',
    context: [user('t'), call('a', 'b'), result('a', '1'), result('b', '2'), reply('r'), user('u'), call('x'), result('x', '3'), reply('r2')],
    keep: 2,
    older: 6,
  },
  {
    name: 'boundary on the second of three results keeps the whole group',
    context: [user('t0'), reply('r0'), user('t'), call('a', 'b', 'c'), result('a', '1'), result('b', '2'), result('c', '3')],
    keep: 3,
    older: 3,
  },
  {
    name: 'one message older is not worth a summary (it would save nothing)',
    context: [user('t'), call('a', 'b', 'c'), result('a', '1'), result('b', '2'), result('c', '3')],
    keep: 3,
    older: null,
  },
  { name: 'empty context', context: [], keep: 10, older: null },
  { name: 'one exchange, keep 10: shrinking to 2 still leaves nothing older', context: [user('q'), reply('a')], keep: 10, older: null },
  { name: 'everything recent: keep shrinks just enough to leave two messages older', context: pairs(2), keep: 10, older: 2 },
  { name: 'everything recent, three messages: one older would save nothing', context: [user('q'), reply('a'), user('q2')], keep: 10, older: null },
  { name: 'shrinking disabled (minKeepRecent = keepRecent)', context: pairs(2), keep: 10, options: { minKeepRecent: 10 }, older: null },
  { name: 'a summary at the start is part of older', context: [summary, ...pairs(4)], keep: 2, older: 7 },
  {
    name: 'summary and ack alone are not worth re-summarising: shrink past them',
    context: [summary, ack, user('u'), call('x'), result('x', 'r')],
    keep: 3,
    older: 3,
  },
  { name: 'only a summary before one group: nothing to do', context: [summary, call('x'), result('x', '1'), result('x', '2')], keep: 10, older: null },
  { name: 'a leading tool group can be summarised', context: [call('x'), result('x', '1'), user('u'), reply('a')], keep: 2, older: 2 },
  {
    name: 'kept messages over maxRecentTokens: keep shrinks',
    context: [user('q0'), reply('a0'), user('q1'), reply(text(3000)), user('q2'), reply('a2')],
    keep: 4,
    options: { maxRecentTokens: 100 },
    older: 4,
  },
  {
    name: 'within maxRecentTokens: keep stays',
    context: [user('q0'), reply('a0'), user('q1'), reply('a1'), user('q2'), reply('a2')],
    keep: 4,
    options: { maxRecentTokens: 100 },
    older: 2,
  },
];

describe('selectForCompression', () => {
  it.each(cases)('$name', ({ context, keep, options, older }) => {
    const sel = selectForCompression(context, keep, options);
    expect(wouldCompress(context, keep, options)).toBe(older !== null);
    if (older === null) {
      expect(sel).toBeNull();
      return;
    }
    expect(sel).not.toBeNull();
    expect(sel?.older.length).toBe(older);
    // The two parts are the context, in order, same objects.
    expect([...(sel?.older ?? []), ...(sel?.recent ?? [])]).toEqual(context);
    sel?.recent.forEach((m, i) => expect(m).toBe(context[older + i]));
    // recent never opens with a result torn from its call.
    expect(sel?.recent[0]?.role).not.toBe('tool');
  });

  it('never splits a group, whatever keep_recent is', () => {
    const context = [user('t'), call('a', 'b', 'c'), result('a', '1'), result('b', '2'), result('c', '3'), reply('done'), user('more'), call('d'), result('d', '4')];
    for (let keep = 1; keep <= context.length; keep++) {
      const sel = selectForCompression(context, keep, { minKeepRecent: keep });
      if (sel === null) continue;
      expect(sel.recent[0]?.role, `keep ${keep}`).not.toBe('tool');
      expect(sel.recent.length, `keep ${keep}`).toBeGreaterThanOrEqual(keep);
    }
  });
});

describe('the message that started the turn (issue 17 point 5)', () => {
  it('is never among the messages summarised, and is reported as pinned when it fell before the boundary', () => {
    const task = user('Refactor the parser; keep the public API.');
    const context = [user('earlier'), reply('earlier answer'), task, call('a'), result('a', '1'), call('b'), result('b', '2'), call('c'), result('c', '3')];
    const sel = selectForCompression(context, 2, { pinned: task });
    expect(sel?.older).not.toContain(task);
    expect(sel?.pinned).toBe(task);
    expect(sel?.older).toEqual([context[0], context[1], context[3], context[4], context[5], context[6]]);
    expect(sel?.recent).toEqual(context.slice(7));
  });

  it('a turn whose only older message is its task is not compressed', () => {
    const task = user('Fix it.');
    const context = [task, call('a', 'b'), result('a', text(3000)), result('b', text(3000))];
    // Without the pin the task alone would be summarised (and lost on a small model).
    expect(wouldCompress(context, 4, { pinned: task })).toBe(false);
    expect(selectForCompression(context, 4, { pinned: task })).toBeNull();
  });
});
