import { describe, expect, it } from 'vitest';
import { antiStallDue, goalAnchorDue, StallCounter, todoFingerprint, transientMessages, type MechanicsSettings } from '../../src/agent/mechanics.js';

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

describe('transientMessages', () => {
  const base = { settings: all, maxIterations: 10, task: 'Fix the build', todos: [], stalledIterations: 0 };

  it('always ends with the iteration budget, and says so on the last iteration', () => {
    const first = transientMessages({ ...base, iteration: 1 });
    expect(first).toHaveLength(1);
    expect(first[0]?.content).toContain('Iteration 1 of 10: 9 left');
    const last = transientMessages({ ...base, iteration: 10 });
    expect(last.at(-1)?.content).toContain('Last iteration');
  });

  it('adds the goal anchor with the task and todo when due', () => {
    const msgs = transientMessages({ ...base, iteration: 6, todos: [{ id: 1, text: 'run tests', status: 'pending' }] });
    expect(msgs[0]?.content).toContain('Fix the build');
    expect(msgs[0]?.content).toContain('run tests');
    expect(msgs).toHaveLength(2);
  });

  it('adds the anti-stall warning at the threshold', () => {
    const msgs = transientMessages({ ...base, iteration: 3, stalledIterations: 8 });
    expect(msgs.some((m) => m.content.includes('8 iterations without progress'))).toBe(true);
  });

  it('adds nothing when every mechanic is off', () => {
    const off: MechanicsSettings = { iterationBudget: false, goalAnchoring: false, goalInterval: 5, antiStall: false, antiStallThreshold: 8 };
    expect(transientMessages({ ...base, settings: off, iteration: 6, stalledIterations: 8 })).toEqual([]);
  });

  it('is byte-identical for the same input (no timestamps)', () => {
    expect(JSON.stringify(transientMessages({ ...base, iteration: 6 }))).toBe(JSON.stringify(transientMessages({ ...base, iteration: 6 })));
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
