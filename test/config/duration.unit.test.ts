import { describe, expect, it } from 'vitest';
import { parseDuration, tryParseDuration } from '../../src/config/duration.js';
import { InvalidInputError } from '../../src/errors.js';
import { thrown } from './helpers.js';

describe('parseDuration', () => {
  it.each([
    ['90s', 90_000],
    ['30m', 1_800_000],
    ['8h', 28_800_000],
    ['2d', 172_800_000],
    ['500ms', 500],
    ['1h30m', 5_400_000],
    ['1h30m15s', 5_415_000],
    ['1.5h', 5_400_000],
    ['0.5s', 500],
    [' 45m ', 2_700_000],
  ])('%j → %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
    expect(tryParseDuration(text)).toBe(ms);
  });

  it.each(['', '8', '8 h', 'h', '8hours', '-5m', '0s', '1x', '1h 30m', 'm30', '1.h', 'Infinity'])('%j is refused', (text) => {
    expect(tryParseDuration(text)).toBeUndefined();
    const err = thrown(() => parseDuration(text, '--deadline'));
    expect(err).toBeInstanceOf(InvalidInputError);
    expect(err.code).toBe('invalid_duration');
    expect(err.message).toBe(`--deadline: must be a duration such as 90s, 30m, 8h or 1h30m (got ${JSON.stringify(text)})`);
  });
});

describe('durations longer than 365 days', () => {
  it('365d is the longest accepted', () => {
    expect(tryParseDuration('365d')).toBe(365 * 86_400_000);
    expect(tryParseDuration('30d')).toBe(30 * 86_400_000);
  });

  it.each(['366d', '8761h', '365d1ms', '99999999999999999999h', '1' + '0'.repeat(400) + 'd'])('%j is refused with its own message', (text) => {
    expect(tryParseDuration(text)).toBeUndefined();
    const err = thrown(() => parseDuration(text, '--deadline'));
    expect(err).toBeInstanceOf(InvalidInputError);
    expect(err.code).toBe('invalid_duration');
    expect(err.message).toBe(`--deadline: must be at most 365d (got ${JSON.stringify(text)})`);
  });
});
