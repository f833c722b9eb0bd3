import { describe, expect, it, vi } from 'vitest';
import type { ChatMessage } from '../../src/llm/types.js';
import { antiStallDue, budgetNoteDue, goalAnchorDue, noteCarrier, StallCounter, todoFingerprint, reminderNotes, withNotes, type MechanicsSettings } from '../../src/agent/mechanics.js';

const all: MechanicsSettings = { iterationBudget: true, goalAnchoring: true, goalInterval: 5, antiStall: true, antiStallThreshold: 8 };

describe('goalAnchorDue', () => {
  it.each([
    [1, 5, false],
    [5, 5, false],
    [6, 5, true],
    [11, 5, true],
    [7, 5, false],
    [3, 0, false],
    [2, 1, true],
  ])('iteration %i, interval %i → %s', (iteration, interval, want) => {
    expect(goalAnchorDue(iteration, interval)).toBe(want);
  });
});

describe('antiStallDue', () => {
  it.each([
    [7, 8, false],
    [8, 8, true],
    [9, 8, false],
    [16, 8, true],
    [0, 8, false],
    [5, 0, false],
  ])('stalled %i, threshold %i → %s', (stalled, threshold, want) => {
    expect(antiStallDue(stalled, threshold)).toBe(want);
  });
});

describe('budgetNoteDue: the budget note only when it says something new', () => {
  it.each([
    [1, 10, true], // the budget itself
    [2, 10, false],
    [4, 10, false],
    [5, 10, true], // half-way: 5 left
    [6, 10, false],
    [7, 10, true], // 3 left
    [8, 10, false],
    [9, 10, false],
    [10, 10, true], // the last iteration
    [1, 1, true],
    [2, 3, true], // 1 left = floor(3 / 2)
    [20, 40, true],
    [21, 40, false],
    [37, 40, true],
  ])('iteration %i of %i → %s', (iteration, max, want) => {
    expect(budgetNoteDue(iteration, max)).toBe(want);
  });
});

describe('noteCarrier: where a note enters the history for good', () => {
  const tool: ChatMessage = { role: 'tool', content: 'done', tool_name: 'shell' };
  it.each<[string, ChatMessage | undefined, string[], ReturnType<typeof noteCarrier>]>([
    ['no notes', tool, [], null],
    ['a fresh tool result carries them', tool, ['a', 'b'], { replaceLast: { role: 'tool', content: 'done\n\na\n\nb', tool_name: 'shell' } }],
    ['after the task: a trailing user message', { role: 'user', content: 'task' }, ['a'], { append: { role: 'user', content: 'a' } }],
    ['nothing before: a user message', undefined, ['a'], { append: { role: 'user', content: 'a' } }],
  ])('%s', (_name, last, notes, want) => {
    expect(noteCarrier(last, notes)).toEqual(want);
    if (last) expect(last.content).not.toContain('\n\na'); // the input is not changed
  });
});

describe('reminderNotes', () => {
  const base = { settings: all, maxIterations: 10, task: 'Fix the build', todos: [], stalledIterations: 0 };

  it('ends with the iteration budget when due, and says so on the last iteration', () => {
    const first = reminderNotes({ ...base, iteration: 1 });
    expect(first).toHaveLength(1);
    expect(first[0]).toContain('Iteration 1 of 10: 9 left');
    const last = reminderNotes({ ...base, iteration: 10 });
    expect(last.at(-1)).toContain('Last iteration');
  });

  it('adds the goal anchor with the task and todo when due', () => {
    const msgs = reminderNotes({ ...base, iteration: 6, todos: [{ id: 1, text: 'run tests', status: 'pending' }] });
    expect(msgs[0]).toContain('Fix the build');
    expect(msgs[0]).toContain('run tests');
    // Iteration 6 of 10: the budget says nothing new.
    expect(msgs).toHaveLength(1);
  });

  it('adds the anti-stall warning at the threshold', () => {
    const msgs = reminderNotes({ ...base, iteration: 3, stalledIterations: 8 });
    expect(msgs.some((m) => m.includes('8 iterations without progress'))).toBe(true);
  });

  it('adds nothing when every mechanic is off', () => {
    const off: MechanicsSettings = { iterationBudget: false, goalAnchoring: false, goalInterval: 5, antiStall: false, antiStallThreshold: 8 };
    expect(reminderNotes({ ...base, settings: off, iteration: 6, stalledIterations: 8 })).toEqual([]);
  });

  it('is byte-identical for the same input, whatever the clock says (no timestamps)', () => {
    // Every mechanic on: the budget, the goal anchor with a todo, the anti-stall warning.
    const input = { ...base, iteration: 11, stalledIterations: 8, todos: [{ id: 1, text: 'run tests', status: 'pending' as const }] };
    vi.useFakeTimers({ toFake: ['Date', 'performance', 'hrtime'] });
    try {
      vi.setSystemTime(new Date('2026-01-01T00:00:00.000Z'));
      const first = reminderNotes(input);
      // A year and a half later, and monotonic clocks an hour on.
      vi.setSystemTime(new Date('2027-07-15T13:45:30.123Z'));
      vi.advanceTimersByTime(3_600_000);
      const later = reminderNotes(input);
      expect(first).toHaveLength(3);
      expect(JSON.stringify(later)).toBe(JSON.stringify(first));
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('withNotes', () => {
  const sys: ChatMessage = { role: 'system', content: 'persona' };
  const user: ChatMessage = { role: 'user', content: 'Fix the build' };
  const calls: ChatMessage = { role: 'assistant', content: '', tool_calls: [{ name: 'shell', arguments: { command: 'make' } }] };
  const tool: ChatMessage = { role: 'tool', content: 'ok', tool_name: 'shell' };
  const plan: ChatMessage = { role: 'assistant', content: 'PLAN: 1. build' };

  it.each<[string, ChatMessage[], string[], ChatMessage[]]>([
    ['notes go into the last tool result (a copy)', [sys, user, calls, tool], ['[Iteration 2 of 10]'], [sys, user, calls, { ...tool, content: 'ok\n\n[Iteration 2 of 10]' }]],
    ['several notes are joined by a blank line', [sys, user, calls, tool], ['A', 'B'], [sys, user, calls, { ...tool, content: 'ok\n\nA\n\nB' }]],
    ['after a user message they are a trailing user message', [sys, user], ['[Iteration 1 of 10]'], [sys, user, { role: 'user', content: '[Iteration 1 of 10]' }]],
    ['after an assistant message too', [sys, user, plan], ['N'], [sys, user, plan, { role: 'user', content: 'N' }]],
    ['no notes after a tool result: unchanged', [sys, user, calls, tool], [], [sys, user, calls, tool]],
    ['no notes after a user message: unchanged', [sys, user], [], [sys, user]],
  ])('%s', (_title, request, notes, want) => {
    expect(withNotes([...request], notes)).toEqual(want);
  });

  it('never ends a request with an assistant message', () => {
    const out = withNotes([sys, user, plan], []);
    expect(out.at(-1)?.role).toBe('user');
    expect(out.at(-1)?.content).toContain('Continue');
  });

  it('never adds a system message and never changes the stored messages', () => {
    const stored = { ...tool };
    const out = withNotes([sys, user, calls, stored], ['[Iteration 2 of 10]']);
    expect(out.filter((m) => m.role === 'system')).toEqual([sys]);
    expect(stored.content).toBe('ok');
  });
});

describe('StallCounter', () => {
  it('counts iterations without a todo change and resets on progress', () => {
    const empty = todoFingerprint([]);
    const c = new StallCounter(empty);
    expect(c.observe(empty)).toBe(1);
    expect(c.observe(empty)).toBe(2);
    const one = todoFingerprint([{ id: 1, text: 'a', status: 'pending' }]);
    expect(c.observe(one)).toBe(0);
    expect(c.observe(one)).toBe(1);
    const done = todoFingerprint([{ id: 1, text: 'a', status: 'done' }]);
    expect(c.observe(done)).toBe(0);
  });
});
