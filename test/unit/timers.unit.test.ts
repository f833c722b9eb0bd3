import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MAX_TIMER_MS, setLongTimeout } from '../../src/timers.js';

describe('setLongTimeout', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each([
    ['a short delay', 1_000],
    ['just under the Node limit', MAX_TIMER_MS],
    ['25 days (beyond it)', 25 * 86_400_000],
    ['365 days', 365 * 86_400_000],
  ])('%s fires once, on time', (_what, ms) => {
    let fired = 0;
    setLongTimeout(() => fired++, ms);
    vi.advanceTimersByTime(ms - 1);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(1);
    expect(fired).toBe(1);
    vi.advanceTimersByTime(10 * MAX_TIMER_MS);
    expect(fired).toBe(1);
  });

  it('clear stops it, also between steps', () => {
    let fired = 0;
    const t = setLongTimeout(() => fired++, 3 * MAX_TIMER_MS);
    vi.advanceTimersByTime(MAX_TIMER_MS + 5);
    t.clear();
    vi.advanceTimersByTime(5 * MAX_TIMER_MS);
    expect(fired).toBe(0);
    t.clear();
  });

  it('Infinity never fires; 0, negative and NaN fire at once', () => {
    const fired: string[] = [];
    setLongTimeout(() => fired.push('inf'), Infinity);
    setLongTimeout(() => fired.push('zero'), 0);
    setLongTimeout(() => fired.push('negative'), -5);
    setLongTimeout(() => fired.push('nan'), Number.NaN);
    vi.advanceTimersByTime(1);
    expect(fired.sort()).toEqual(['nan', 'negative', 'zero']);
    vi.advanceTimersByTime(100 * MAX_TIMER_MS);
    expect(fired).toHaveLength(3);
  });
});
