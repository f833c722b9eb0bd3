/**
 * `llm.keep_alive` as Ollama reads it: api/types.go `(*Duration).UnmarshalJSON` takes a JSON
 * number as seconds (negative = forever) and a JSON string only through Go's
 * `time.ParseDuration`; a failed bind is a 400 from `ChatHandler` (server/routes.go). A bare
 * integer string is seconds, as envconfig/config.go `KeepAlive` reads `OLLAMA_KEEP_ALIVE`, and
 * goes out as a number.
 */
import { describe, expect, it } from 'vitest';
import { costGrowth } from '../support/cost-growth.js';
import { KEEP_ALIVE_HINT, isGoDuration, keepAliveProblem, keepAliveWire } from '../../src/config/keep-alive.js';
import { NaviConfigSchema } from '../../src/config/schema.js';

describe('isGoDuration (time.ParseDuration)', () => {
  it.each([
    '0', '-0', '+0', '30m', '1h30m', '-1m', '+5m', '300ms', '1.5h', '.5h', '1.h', '2h45m30.5s', '10us', '10µs', '10μs', '7ns',
    '0s', '0001s', '2562047h', '-2562047h47m16.854775808s',
  ])('%j is a Go duration', (s) => {
    expect(isGoDuration(s)).toBe(true);
  });

  it.each([
    ['', 'empty'],
    ['-', 'sign only'],
    ['-1', 'missing unit (only "0" may omit it)'],
    ['3600', 'missing unit'],
    ['1d', 'unknown unit: Go has no days'],
    ['1H', 'units are case-sensitive'],
    ['1 h', 'space is an unknown unit'],
    ['.s', 'no digits'],
    ['1h-30m', 'a sign only at the start'],
    ['1.2.3s', 'missing unit after 1.2'],
    ['forever', 'no number'],
    ['2562048h', 'overflows int64 nanoseconds'],
    ['9223372036854775808ns', 'one past the int64 maximum'],
    ['99999999999999999999s', 'leading int overflows'],
  ])('%j is refused (%s)', (s) => {
    expect(isGoDuration(s)).toBe(false);
  });

  it('answers on a megabyte of parts, at a cost linear in their number', async () => {
    expect(isGoDuration('1ns'.repeat(350_000))).toBe(true);
    expect(isGoDuration(`${'1'.repeat(1_000_000)}s`)).toBe(false);
    // One value of 80 000 parts against 16 of 5 000: linear costs about the same (~1), quadratic 16×.
    const inputs = new Map([5_000, 80_000].map((n) => [n, '1ns'.repeat(n)]));
    const growth = await costGrowth((n) => isGoDuration(inputs.get(n) ?? ''), 5_000, 80_000);
    expect(growth.ratio, growth.text).toBeLessThan(4);
  });
});

describe('keepAliveWire / keepAliveProblem', () => {
  it.each<[string | number, string | number]>([
    ['30m', '30m'],
    ['1h30m', '1h30m'],
    ['-1m', '-1m'],
    ['300ms', '300ms'],
    ['0', 0],
    ['-1', -1],
    ['3600', 3600],
    ['+60', 60],
    ['007', 7],
    [-1, -1],
    [-0.5, -0.5],
    [0, 0],
    [1.5, 1.5],
    [3600, 3600],
  ])('%j is sent as %j', (value, wire) => {
    expect(keepAliveProblem(value)).toBeUndefined();
    expect(keepAliveWire(value)).toBe(wire);
    // Loading twice (the loader parses each layer, then the merge) changes nothing.
    expect(keepAliveWire(keepAliveWire(value))).toBe(wire);
  });

  it.each<[unknown, string]>([
    ['forever', 'not a duration'],
    ['1d', 'Go has no day unit'],
    ['1.5', 'a decimal string is neither an integer nor a duration'],
    [' 30m', 'no padding'],
    ['', 'empty'],
    ['99999999999', 'seconds beyond an int64 of nanoseconds'],
    [1e10, 'seconds beyond an int64 of nanoseconds'],
    [Number.POSITIVE_INFINITY, 'not finite'],
    [true, 'not a number or string'],
    [null, 'not a number or string'],
  ])('%j is refused (%s)', (value) => {
    expect(keepAliveProblem(value)).toBe(KEEP_ALIVE_HINT);
  });
});

describe('the schema loads llm.keep_alive in wire form', () => {
  it.each<[unknown, string | number]>([
    [undefined, '30m'],
    ['2h', '2h'],
    ['-1', -1],
    [-1, -1],
    ['86400', 86400],
  ])('%j → %j', (value, want) => {
    const config = NaviConfigSchema.parse(value === undefined ? {} : { llm: { keep_alive: value } });
    expect(config.llm.keep_alive).toBe(want);
  });

  it.each([['forever'], [{}], [false]])('%j is a schema error with the allowed forms', (value) => {
    const result = NaviConfigSchema.safeParse({ llm: { keep_alive: value } });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([['llm.keep_alive', KEEP_ALIVE_HINT]]);
  });
});
