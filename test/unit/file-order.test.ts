import { describe, expect, it } from 'vitest';
import { coldOrder, isUnitFile, matchesPattern } from '../support/file-order.js';

describe('matchesPattern', () => {
  it.each([
    ['test/unit/a.test.ts', 'test/unit/**/*.test.ts', true],
    ['test/unit/deep/b.test.ts', 'test/unit/**/*.test.ts', true],
    ['test/unit/helpers.ts', 'test/unit/**/*.test.ts', false],
    ['test/unit-other/a.test.ts', 'test/unit/**/*.test.ts', false],
    ['test/stress/a.stress.ts', 'test/stress/**/*.stress.ts', true],
    ['test/store/lock.test.ts', 'test/store/lock.test.ts', true],
    ['test/store/lock-heartbeat.test.ts', 'test/store/lock.test.ts', false],
    ['test/x/.test.ts', 'test/x/**/*.test.ts', true],
  ])('%s against %s: %s', (rel, pattern, expected) => {
    expect(matchesPattern(rel, pattern)).toBe(expected);
  });
});

describe('isUnitFile', () => {
  const unit = ['test/config/**/*.test.ts', 'test/unit/**/*.test.ts'];
  const notUnit = ['test/config/keep-alive-wire.test.ts'];
  it.each([
    ['test/config/load.test.ts', true],
    ['test/config/keep-alive-wire.test.ts', false],
    ['test/scenario/signals.test.ts', false],
    ['test/unit/timers.test.ts', true],
  ])('%s: %s', (rel, expected) => {
    expect(isUnitFile(rel, unit, notUnit)).toBe(expected);
  });
});

describe('coldOrder', () => {
  it('puts end-to-end files first, larger before smaller, ties by path', () => {
    const files = [
      { rel: 'test/unit/big.test.ts', size: 90_000 },
      { rel: 'test/scenario/small.test.ts', size: 5_000 },
      { rel: 'test/unit/small.test.ts', size: 1_000 },
      { rel: 'test/scenario/b.test.ts', size: 20_000 },
      { rel: 'test/scenario/a.test.ts', size: 20_000 },
    ];
    expect(coldOrder(files, ['test/unit/**/*.test.ts'], []).map((f) => f.rel)).toEqual([
      'test/scenario/a.test.ts',
      'test/scenario/b.test.ts',
      'test/scenario/small.test.ts',
      'test/unit/big.test.ts',
      'test/unit/small.test.ts',
    ]);
  });

  it('leaves its input as it was', () => {
    const files = [
      { rel: 'test/unit/a.test.ts', size: 1 },
      { rel: 'test/scenario/a.test.ts', size: 1 },
    ];
    coldOrder(files, ['test/unit/**/*.test.ts'], []);
    expect(files.map((f) => f.rel)).toEqual(['test/unit/a.test.ts', 'test/scenario/a.test.ts']);
  });
});
