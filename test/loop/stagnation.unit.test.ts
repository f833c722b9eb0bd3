import { describe, expect, it } from 'vitest';
import { consecutiveCount, detectStagnation, type StagnationResult } from '../../src/loop/stagnation.js';

const h = (s: string): string[] => (s === '' ? [] : s.split(' '));

describe('consecutiveCount (navigator count_consecutive_same)', () => {
  it.each([
    ['', 'a', 1],
    ['a', 'a', 2],
    ['a a', 'a', 3],
    ['b a a', 'a', 3],
    ['a a b', 'a', 1],
    ['a b a', 'a', 2],
  ])('history %j, current %s → %d', (history, current, count) => {
    expect(consecutiveCount(h(history), current)).toBe(count);
  });
});

describe('detectStagnation', () => {
  const none = (count: number): StagnationResult => ({ stagnant: false, reason: null, count });
  const same = (count: number): StagnationResult => ({ stagnant: true, reason: 'same_state', count });
  const osc = (count: number, period: number): StagnationResult => ({ stagnant: true, reason: 'oscillation', count, period });

  it.each<[string, number, StagnationResult]>([
    ['', 3, none(0)],
    ['a', 3, none(1)],
    ['a a', 3, none(2)],
    ['a a', 2, same(2)],
    ['a a a', 3, same(3)],
    ['b a a a', 3, same(3)],
    ['a a a b', 3, none(1)],
    ['a a a a', 3, same(4)],
    // A plain repeat is same_state, never oscillation, even below the threshold.
    ['a a a a', 5, none(4)],
    // Period 2 completed twice.
    ['a b a b', 3, osc(4, 2)],
    ['x a b a b', 3, osc(4, 2)],
    ['a b a b a', 3, osc(5, 2)],
    ['a b a', 3, none(1)],
    ['a b c a b', 3, none(1)],
    // Period 3 completed twice.
    ['a b c a b c', 3, osc(6, 3)],
    ['x a b c a b c', 3, osc(6, 3)],
    ['a a b a a b', 3, osc(6, 3)],
    ['a b c a b d', 3, none(1)],
    // Period 4 is progress as far as we can tell.
    ['a b c d a b c d', 3, none(1)],
    // Same state wins when both hold at the threshold.
    ['a b b', 2, same(2)],
  ])('%j (threshold %d)', (history, threshold, expected) => {
    expect(detectStagnation(h(history), threshold)).toEqual(expected);
  });
});
