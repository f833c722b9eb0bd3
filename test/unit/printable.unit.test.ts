import { describe, expect, it } from 'vitest';
import { InvalidInputError, NaviError, printable } from '../../src/errors.js';

describe('printable', () => {
  it.each([
    ['plain', 'plain'],
    ['a\nb', 'a\\nb'],
    ['x\u001b[2J', 'x\\u001b[2J'],
    ['\t\r\b\f', '\\t\\r\\b\\f'],
    ['\u0000', '\\u0000'],
    ['del\u007f c1\u009b', 'del\\u007f c1\\u009b'],
    ['é 🚀 \u2028', 'é 🚀 \u2028'],
  ])('%j → %j', (input, expected) => {
    expect(printable(input)).toBe(expected);
    expect(printable(printable(input))).toBe(expected);
  });
});

describe('NaviError messages', () => {
  it('escape control characters except line breaks', () => {
    expect(new InvalidInputError('x', 'a\u001b[31mb\tc\nd').message).toBe('a\\u001b[31mb\\tc\nd');
    expect(new NaviError('error', 'x', 'one\ntwo').message).toBe('one\ntwo');
  });
});
