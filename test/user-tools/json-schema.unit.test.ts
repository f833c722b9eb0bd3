import { describe, expect, it } from 'vitest';
import { JsonSchemaCompiler, schemaFromCheck } from '../../src/tools/json-schema.js';

const compiler = new JsonSchemaCompiler();

async function checkOf(schema: Record<string, unknown>) {
  const compiled = await compiler.compile(schema);
  if (!compiled.ok) throw new Error(compiled.problem);
  return compiled.check;
}

describe('JsonSchemaCompiler: argument problems in the words the model reads', () => {
  const schema = {
    type: 'object',
    properties: {
      mode: { enum: ['fast', 'slow'] },
      kind: { const: 'file' },
      label: { type: ['string', 'null'] },
      'a/b': { type: 'string' },
      items: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } },
      when: { type: 'string', format: 'date-time' },
    },
  };

  it.each([
    [{ mode: 'medium' }, [{ path: ['mode'], message: 'expected one of "fast", "slow"' }]],
    [{ kind: 'dir' }, [{ path: ['kind'], message: 'expected "file"' }]],
    [{ label: 3 }, [{ path: ['label'], message: 'expected string or null, received number' }]],
    [{ 'a/b': false }, [{ path: ['a/b'], message: 'expected string, received boolean' }]],
    [{ items: [{ id: 1 }, {}] }, [{ path: ['items', '1', 'id'], message: 'required' }]],
    // `format` is an annotation: checking it would need ajv-formats.
    [{ when: 'not a date' }, []],
    [{ label: null, mode: 'fast', kind: 'file' }, []],
  ])('%j → %j', async (value, issues) => {
    expect((await checkOf(schema))(value)).toEqual(issues);
  });

  it('compiles draft 2019-09 and 2020-12 schemas by their $schema', async () => {
    const tuple = await checkOf({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false } },
    });
    expect(tuple({ pair: ['a', 1] })).toEqual([]);
    expect(tuple({ pair: ['a', 'b'] })).toEqual([{ path: ['pair', '1'], message: 'expected number, received string' }]);
    const draft2019 = await checkOf({
      $schema: 'https://json-schema.org/draft/2019-09/schema#',
      type: 'object',
      dependentRequired: { a: ['b'] },
    });
    expect(draft2019({ a: 1 })).toHaveLength(1);
  });
});

describe('schemaFromCheck', () => {
  it('passes valid arguments through unchanged (no coercion, no defaults)', async () => {
    const schema = schemaFromCheck(await checkOf({ type: 'object', properties: { n: { type: 'number', default: 3 } } }));
    const args = { extra: 'kept' };
    const parsed = schema.safeParse(args);
    expect(parsed.success && parsed.data).toBe(args);
    expect(args).toEqual({ extra: 'kept' });
    expect(schema.safeParse({ n: '3' }).success).toBe(false);
  });
});
