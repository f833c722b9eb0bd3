import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/errors.js';
import { builtinTools } from '../../src/tools/builtin/index.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { ToolDefinition } from '../../src/tools/types.js';
import { makeContext, removeDir, tempDir } from './helpers.js';

const echo = defineTool({
  name: 'echo',
  description: 'Echo text.',
  schema: z.object({ text: z.string(), times: z.number().int().min(1).optional(), nested: z.object({ a: z.string() }).optional() }),
  execute: (args) => Promise.resolve({ ok: true, output: args.text.repeat(args.times ?? 1) }),
});

const boom = defineTool({
  name: 'boom',
  description: 'Always throws.',
  schema: z.object({}),
  execute: () => Promise.reject(new Error('disk on fire\nstack line')),
});

const aborting = defineTool({
  name: 'aborting',
  description: 'Throws an AbortError.',
  schema: z.object({}),
  execute: () => Promise.reject(new DOMException('stopped', 'AbortError')),
});

const tools: ToolDefinition[] = [echo, boom, aborting];
const all = new Set(['echo', 'boom', 'aborting']);
let cwd: string;

beforeAll(async () => {
  cwd = await tempDir();
});
afterAll(async () => {
  await removeDir(cwd);
});

describe('ToolRegistry.execute: bad calls become results', () => {
  const registry = new ToolRegistry(tools);

  it('runs a valid call with object or JSON-string arguments', async () => {
    const ctx = makeContext(cwd);
    expect(await registry.execute('echo', { text: 'hi', times: 2 }, ctx, all)).toEqual({ ok: true, output: 'hihi' });
    expect(await registry.execute('echo', '{"text":"yo"}', ctx, all)).toEqual({ ok: true, output: 'yo' });
  });

  it.each([
    ['nope', { text: 'x' }, new Set(['echo', 'boom']), "unknown tool 'nope'; available: echo, boom"],
    ['boom', {}, new Set(['echo']), "unknown tool 'boom'; available: echo"],
    ['echo', '{"text": ', all, "invalid JSON arguments for 'echo': "],
    ['echo', {}, all, "invalid arguments for 'echo': text: required"],
    ['echo', { text: 5 }, all, "invalid arguments for 'echo': text: expected string, received number"],
    ['echo', { text: 'a', times: 0 }, all, "invalid arguments for 'echo': times: Too small"],
    ['echo', { text: 'a', nested: { a: 1 } }, all, "invalid arguments for 'echo': nested.a: expected string"],
    ['echo', '[1,2]', all, "invalid arguments for 'echo': (arguments): expected object, received array"],
    ['echo', 42, all, "invalid arguments for 'echo': (arguments): expected object, received number"],
    ['boom', {}, all, "tool 'boom' failed: disk on fire"],
    ['boom', '', all, "tool 'boom' failed: disk on fire"],
  ])('%s %j → %s', async (name, args, allowed, expected) => {
    const result = await registry.execute(name, args, makeContext(cwd), allowed);
    expect(result.ok).toBe(false);
    expect(result.output.startsWith(expected)).toBe(true);
    expect(result.output).not.toContain('stack line');
  });

  it('propagates an AbortError from a tool', async () => {
    await expect(registry.execute('aborting', {}, makeContext(cwd), all)).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('refuses to start a call once the signal has fired', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(registry.execute('echo', { text: 'x' }, makeContext(cwd, { signal: controller.signal }), all)).rejects.toMatchObject({
      name: 'AbortError',
    });
  });

  it('redacts, then caps every output', async () => {
    const small = new ToolRegistry(tools, { maxOutputBytes: 300 });
    const ctx = makeContext(cwd, { redact: (t) => t.replaceAll('secret', '[REDACTED:X]') });
    const result = await small.execute('echo', { text: 'secret ', times: 200 }, ctx, all);
    expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(300);
    expect(result.output).not.toContain('secret');
    expect(result.output).toMatch(/\[… \d+ bytes omitted …\]/);
    const unknown = await small.execute('secret_tool', {}, ctx, all);
    expect(unknown.output).toContain("unknown tool '[REDACTED:X]_tool'");
  });

  it('rejects duplicate tool names', () => {
    expect(() => new ToolRegistry([echo, echo])).toThrow(/defined twice/);
  });
});

describe('ToolRegistry.schemas', () => {
  it('is byte-identical and object-identical on every call', () => {
    const registry = new ToolRegistry(builtinTools());
    const first = JSON.stringify(registry.schemas(registry.names()));
    const again = registry.schemas(registry.names());
    expect(JSON.stringify(again)).toBe(first);
    expect(again[0]).toBe(registry.schemas(['read_file'])[0]);
    expect(Object.isFrozen(again[0]?.function.parameters)).toBe(true);
  });

  it('emits compact parameters without $schema or safe-integer bounds', () => {
    const registry = new ToolRegistry([echo]);
    const [schema] = registry.schemas(['echo']);
    expect(schema).toEqual({
      type: 'function',
      function: {
        name: 'echo',
        description: 'Echo text.',
        parameters: {
          type: 'object',
          properties: {
            text: { type: 'string' },
            times: { type: 'integer', minimum: 1 },
            nested: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
          },
          required: ['text'],
        },
      },
    });
  });

  it('keeps the built-in tool schemas small (SPEC §12 request budget)', () => {
    const registry = new ToolRegistry(builtinTools());
    expect(registry.names()).toEqual([
      'read_file',
      'write_file',
      'edit_file',
      'list_dir',
      'search_files',
      'shell',
      'todo',
      'scratchpad',
    ]);
    expect(JSON.stringify(registry.schemas(registry.names())).length).toBeLessThanOrEqual(3500);
  });

  it('uses a tool-declared JSON schema as is', () => {
    const parameters = { type: 'object', properties: { q: { type: 'string' } } };
    const registry = new ToolRegistry([{ ...echo, name: 'user_tool', parameters }]);
    expect(registry.schemas(['user_tool'])[0]?.function.parameters).toEqual(parameters);
  });

  it('throws an invalid-input error naming an unknown tool', () => {
    const registry = new ToolRegistry([echo]);
    expect(() => registry.schemas(['web_fetch'])).toThrow(InvalidInputError);
    expect(() => registry.schemas(['web_fetch'])).toThrow(/unknown tool 'web_fetch'; available: echo/);
  });
});
