import { describe, expect, it } from 'vitest';
import { builtinTools } from '../../src/tools/builtin/index.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { ToolResult } from '../../src/tools/types.js';
import { type TestContext, makeContext } from './helpers.js';

const registry = new ToolRegistry(builtinTools());
const allowed = new Set(registry.names());

function session(overrides: Parameters<typeof makeContext>[1] = {}) {
  const ctx: TestContext = makeContext('/nonexistent-cwd-not-used', overrides);
  const call = (name: string, args: unknown): Promise<ToolResult> => registry.execute(name, args, ctx, allowed);
  return { ctx, call };
}

describe('todo', () => {
  it('sets, adds, updates, lists and clears, emitting todo_updated after each change', async () => {
    const { ctx, call } = session();
    expect(await call('todo', { action: 'list' })).toEqual({ ok: true, output: '(todo list is empty)' });
    expect(await call('todo', { action: 'set', items: ['read code', { text: 'fix bug', status: 'in_progress' }] })).toEqual({
      ok: true,
      output: '[ ] 1. read code\n[~] 2. fix bug',
    });
    expect((await call('todo', { action: 'add', text: 'run tests' })).output).toBe(
      '[ ] 1. read code\n[~] 2. fix bug\n[ ] 3. run tests',
    );
    expect((await call('todo', { action: 'update', id: '1', status: 'done' })).output).toBe(
      '[x] 1. read code\n[~] 2. fix bug\n[ ] 3. run tests',
    );
    expect(await ctx.store.getTodos('session-1')).toEqual([
      { id: 1, text: 'read code', status: 'done' },
      { id: 2, text: 'fix bug', status: 'in_progress' },
      { id: 3, text: 'run tests', status: 'pending' },
    ]);
    expect((await call('todo', { action: 'clear' })).output).toBe('(todo list is empty)');
    expect(ctx.events.map((e) => e.type)).toEqual(['todo_updated', 'todo_updated', 'todo_updated', 'todo_updated']);
    expect(ctx.events[2]).toEqual({
      type: 'todo_updated',
      todos: [
        { id: 1, text: 'read code', status: 'done' },
        { id: 2, text: 'fix bug', status: 'in_progress' },
        { id: 3, text: 'run tests', status: 'pending' },
      ],
    });
  });

  it.each([
    [{ action: 'set' }, "todo set needs 'items'"],
    [{ action: 'add' }, "todo add needs 'text'"],
    [{ action: 'update', id: 9, status: 'done' }, "todo update needs 'id' of an existing step (ids: 1)"],
    [{ action: 'update', id: 1 }, "todo update needs 'status'"],
    [{ action: 'frobnicate' }, "invalid arguments for 'todo': action: Invalid option"],
  ])('refuses %j', async (args, message) => {
    const { ctx, call } = session();
    await ctx.store.setTodos('session-1', [{ id: 1, text: 'a', status: 'pending' }]);
    const result = await call('todo', args);
    expect(result.ok).toBe(false);
    expect(result.output).toContain(message);
    expect(ctx.events).toEqual([]);
  });

  it('requires a validation to mark a step done when step validation is on', async () => {
    const { ctx, call } = session({ stepValidation: true });
    await call('todo', { action: 'set', items: ['write fix'] });
    const refused = await call('todo', { action: 'update', id: 1, status: 'done' });
    expect(refused.ok).toBe(false);
    expect(refused.output).toContain("needs 'validation'");
    expect((await call('todo', { action: 'update', id: 1, status: 'done', validation: '  ' })).ok).toBe(false);
    expect(await call('todo', { action: 'update', id: 1, status: 'done', validation: 'npm test exit 0' })).toEqual({
      ok: true,
      output: '[x] 1. write fix (validated: npm test exit 0)',
    });
    expect((await ctx.store.getTodos('session-1'))[0]?.validation).toBe('npm test exit 0');
  });

  it('does not require a validation when step validation is off', async () => {
    const { call } = session();
    await call('todo', { action: 'set', items: ['x'] });
    expect((await call('todo', { action: 'update', id: 1, status: 'done' })).ok).toBe(true);
  });
});

describe('scratchpad', () => {
  it('writes, reads one or all, lists and deletes', async () => {
    const { ctx, call } = session();
    expect(await call('scratchpad', { action: 'list' })).toEqual({ ok: true, output: '(scratchpad is empty)' });
    expect(await call('scratchpad', { action: 'write', key: 'db', value: 'uses pglite' })).toEqual({
      ok: true,
      output: 'saved [note] db: uses pglite',
    });
    await call('scratchpad', { action: 'write', key: 'bug', value: 'off by one in loop.ts', kind: 'finding' });
    expect((await call('scratchpad', { action: 'write', key: 'db', value: 'uses postgres', kind: 'error' })).output).toBe(
      'updated [error] db: uses postgres',
    );
    expect(await call('scratchpad', { action: 'read', key: 'bug' })).toEqual({
      ok: true,
      output: '[finding] bug: off by one in loop.ts',
    });
    expect((await call('scratchpad', { action: 'read' })).output).toBe(
      '[error] db: uses postgres\n[finding] bug: off by one in loop.ts',
    );
    expect((await call('scratchpad', { action: 'list' })).output).toBe('db (error, 13 chars)\nbug (finding, 21 chars)');
    expect(await call('scratchpad', { action: 'delete', key: 'db' })).toEqual({ ok: true, output: "deleted 'db'" });
    expect(await ctx.store.getScratchpad('session-1')).toEqual([
      { key: 'bug', value: 'off by one in loop.ts', kind: 'finding' },
    ]);
  });

  it.each([
    [{ action: 'write', key: 'k' }, "scratchpad write needs 'key' and 'value'"],
    [{ action: 'write', value: 'v' }, "scratchpad write needs 'key' and 'value'"],
    [{ action: 'delete' }, "scratchpad delete needs 'key'"],
    [{ action: 'delete', key: 'missing' }, "no scratchpad entry 'missing'"],
    [{ action: 'read', key: 'missing' }, "no scratchpad entry 'missing'"],
    [{ action: 'write', key: 'k', value: 'v', kind: 'todo' }, "invalid arguments for 'scratchpad': kind: Invalid option"],
  ])('refuses %j', async (args, message) => {
    const { call } = session();
    const result = await call('scratchpad', args);
    expect(result.ok).toBe(false);
    expect(result.output).toContain(message);
  });

  it('keeps sessions apart', async () => {
    const { ctx, call } = session();
    await call('scratchpad', { action: 'write', key: 'a', value: 'one' });
    const other = await registry.execute('scratchpad', { action: 'read' }, { ...ctx, sessionId: 'session-2' }, allowed);
    expect(other.output).toBe('(scratchpad is empty)');
  });
});
