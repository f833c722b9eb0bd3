/**
 * The look-alike of a module namespace that navi rebuilds from what the loader inside the
 * sandbox wrote (user-tool-load-sandboxed.ts): each encoded value decodes to one the module
 * contract's checks see as the module's own (its type, its JSON), never to code.
 */
import { describe, expect, it } from 'vitest';
import { decodeValue } from '../../src/tools/user-tool-load-sandboxed.js';
import { typeName } from '../../src/util/guards.js';

describe('decodeValue', () => {
  it.each([
    ['a string', 'greet', 'string'],
    ['a finite number', 42, 'number'],
    ['null', null, 'null'],
    ['a boolean', true, 'boolean'],
    ['undefined', { $: 'undefined' }, 'undefined'],
    ['a function (a stand-in)', { $: 'function' }, 'function'],
    ['a bigint', { $: 'bigint' }, 'bigint'],
    ['a symbol', { $: 'symbol' }, 'symbol'],
    ['NaN', { $: 'number', v: 'NaN' }, 'number'],
    ['an array', { $: 'array', items: [1, { $: 'function' }] }, 'array'],
    ['an object', { $: 'object', keys: { name: 'x' } }, 'object'],
  ])('%s keeps its type', (_label, encoded, type) => {
    expect(typeName(decodeValue(encoded))).toBe(type);
  });

  it('a stand-in function is never the module code: it throws', () => {
    const execute = decodeValue({ $: 'function' }) as () => unknown;
    expect(() => execute()).toThrow(/loaded inside the sandbox/);
  });

  it('an object keeps only the keys sent, decoded', () => {
    expect(decodeValue({ $: 'object', keys: { name: 'x', tools: { $: 'array', items: [{ $: 'object', keys: { name: 'y' } }] } } })).toEqual({
      name: 'x',
      tools: [{ name: 'y' }],
    });
  });

  it('a schema serialises to the JSON the module gave, and keeps its own `type`', () => {
    const json = JSON.stringify({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] });
    const schema = decodeValue({ $: 'schema', type: 'object', json }) as Record<string, unknown>;
    expect(schema.type).toBe('object');
    expect(JSON.stringify(schema)).toBe(json);
  });

  it("a schema the module could not serialise throws the module's error when serialised", () => {
    const schema = decodeValue({ $: 'schema', type: 'object', error: { name: 'TypeError', message: 'Do not know how to serialize a BigInt' } });
    let thrown: unknown;
    try {
      JSON.stringify(schema);
    } catch (err) {
      thrown = err;
    }
    // Named as the module's error was: messages print `TypeError: …` (errorLine).
    expect(thrown).toMatchObject({ name: 'TypeError', message: 'Do not know how to serialize a BigInt' });
  });

  it('a schema whose toJSON gave nothing serialises to nothing, as the module would', () => {
    expect(JSON.stringify(decodeValue({ $: 'schema', type: 'object' }))).toBeUndefined();
  });
});
