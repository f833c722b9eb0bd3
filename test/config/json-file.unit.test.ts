import { describe, expect, it } from 'vitest';
import { findJsonErrorOffset, lineColumnAt, lineLocator, parseJsonText } from '../../src/config/json-file.js';
import { thrown } from './helpers.js';

describe('lineColumnAt', () => {
  it.each([
    ['abc', 0, 1, 1],
    ['abc', 2, 1, 3],
    ['a\nbc', 2, 2, 1],
    ['a\nbc', 3, 2, 2],
    ['a\n\n', 3, 3, 1],
  ])('%j @%d → %d:%d', (text, offset, line, column) => {
    expect(lineColumnAt(text, offset)).toEqual({ line, column });
    expect(lineLocator(text)(offset)).toEqual({ line, column });
  });

  it('lineLocator agrees with a scan at every offset, past the end included', () => {
    const text = 'ab\n\ncd\ne\n';
    const locate = lineLocator(text);
    for (let offset = -1; offset <= text.length + 1; offset++) {
      const end = Math.max(0, Math.min(offset, text.length));
      const before = text.slice(0, end);
      expect(locate(offset), `offset ${offset}`).toEqual({ line: before.split('\n').length, column: end - (before.lastIndexOf('\n') + 1) + 1 });
    }
  });
});

describe("invalid-JSON messages never echo the file's content", () => {
  it.each([
    ['{"a": x}', /invalid JSON: Unexpected token 'x'$/],
    ['{"api_key": "sk-live-0123456789abcdef", "b": x}', /invalid JSON: Unexpected token 'x'$/],
    [`{"k": "${'v'.repeat(100)}", "b": x, "c": "${'w'.repeat(100)}"}`, /invalid JSON: Unexpected token 'x'$/],
  ])('%j', (text, expected) => {
    const err = thrown(() => parseJsonText(text, 'c.json', 'config_invalid'));
    expect(err.message).toMatch(expected);
    expect(err.message).not.toContain('is not valid JSON');
  });
});

describe('findJsonErrorOffset agrees with V8 wherever V8 reports a position', () => {
  const samples = [
    '{"a":1,}',
    '[1 2]',
    '{"a":1} x',
    '{"a":"b\\q"}',
    '{"a":1',
    '{"a" 1}',
    '{a:1}',
    '[1,]',
    '{"a":[1,2,{"b":nul}]}',
    '"\u0001"',
    '{"a":01}',
  ];
  it.each(samples)('%j', (text) => {
    let v8: number | undefined;
    try {
      JSON.parse(text);
    } catch (err) {
      const m = /at position (\d+)/.exec((err as Error).message);
      v8 = m ? Number(m[1]) : undefined;
    }
    const ours = findJsonErrorOffset(text);
    expect(ours).toBeGreaterThanOrEqual(0);
    if (v8 !== undefined) expect(ours).toBe(v8);
  });

  it.each(['{}', '[]', '{"a":[1,2.5e3,-0,true,false,null,"x\\u00e9"]}', ' 1 '])('%j is valid', (text) => {
    expect(findJsonErrorOffset(text)).toBe(-1);
  });
});

describe('parseJsonText', () => {
  it.each([
    ['{\n  "a": tru\n}', "f.json:2:11: invalid JSON: Unexpected token '\\n'"],
    ['{\n  "a": 1\n  "b": 2\n}', 'f.json:3:3: invalid JSON: Expected \',\' or \'}\' after property value'],
    ['\n\n   nope', "f.json:3:5: invalid JSON: Unexpected token 'o'"],
  ])('%j', (text, want) => {
    const err = thrown(() => parseJsonText(text, 'f.json', 'some_code'));
    expect(err.message).toBe(want);
    expect(err.code).toBe('some_code');
    expect(err.message).not.toContain('is not valid JSON');
  });
});
