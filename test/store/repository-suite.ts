/**
 * The repository contract, run against every backend (PGlite always, PostgreSQL when
 * DATABASE_URL is set). Each backend file opens one database and passes accessors in.
 */
import { expect, it } from 'vitest';
import { StorageError } from '../../src/errors.js';
import type { ChatMessage } from '../../src/llm/types.js';
import type { ScratchpadEntry, TodoItem } from '../../src/tools/types.js';
import { defineAgentStateSuite } from './agent-state-suite.js';
import { newSession, type SuiteBackend } from './fixtures.js';
import { defineLoopRunSuite } from './loop-run-suite.js';

export { newSession, type SuiteBackend } from './fixtures.js';

/** Registers the shared repository tests in the current `describe`. */
export function defineRepositorySuite(backend: SuiteBackend): void {
  const s = () => backend.store();

  it('creates, reads and lists sessions, most recently active first', async () => {
    const a = newSession({ kind: 'loop', title: 'first' });
    const b = newSession({ kind: 'loop', title: 'second' });
    const child = newSession({ kind: 'subagent', parentId: a.id, profile: 'researcher' });
    await s().sessions.create(a);
    await s().sessions.create(b);
    await s().sessions.create(child);

    const got = await s().sessions.get(child.id);
    expect(got).toMatchObject({
      id: child.id,
      kind: 'subagent',
      profile: 'researcher',
      cwd: '/work/project',
      parentId: a.id,
      title: 'fix the failing test',
      model: 'qwen3:8b',
      promptTokens: 0,
      completionTokens: 0,
    });
    expect(got?.createdAt).toBeInstanceOf(Date);
    expect(Math.abs((got?.createdAt.getTime() ?? 0) - Date.now())).toBeLessThan(60_000);
    expect(await s().sessions.get('no-such-session')).toBeNull();

    const loops = (await s().sessions.list({ kind: 'loop' })).map((r) => r.id);
    expect(loops.indexOf(b.id)).toBeLessThan(loops.indexOf(a.id));
    expect(loops).not.toContain(child.id);

    // Activity moves a session to the top.
    await s().sessions.addUsage(a.id, 1200, 80);
    await s().sessions.addUsage(a.id, 300, 20);
    const [top] = await s().sessions.list({ kind: 'loop', limit: 1 });
    expect(top).toMatchObject({ id: a.id, promptTokens: 1500, completionTokens: 100 });
    expect(top?.updatedAt.getTime()).toBeGreaterThanOrEqual(top?.createdAt.getTime() ?? Infinity);
    expect(await s().sessions.list({ limit: 2 })).toHaveLength(2);
  });

  it('rejects a duplicate id and a missing parent with StorageErrors', async () => {
    const a = newSession();
    await s().sessions.create(a);
    await expect(s().sessions.create(a)).rejects.toMatchObject({ name: 'StorageError', code: 'session_exists' });
    await expect(s().sessions.create(newSession({ parentId: 'ghost' }))).rejects.toMatchObject({
      code: 'session_not_found',
    });
  });

  it('removing a session deletes its messages, context, state and child sessions', async () => {
    const parent = newSession();
    const child = newSession({ kind: 'subagent', parentId: parent.id });
    await s().sessions.create(parent);
    await s().sessions.create(child);
    for (const id of [parent.id, child.id]) {
      await s().messages.append(id, { role: 'user', content: 'hello' });
      await s().state.setTodos(id, [{ id: 1, text: 'step', status: 'pending' }]);
      await s().state.setScratchpad(id, [{ key: 'k', kind: 'note', value: 'v' }]);
    }

    expect(await s().sessions.remove(parent.id)).toBe(true);
    expect(await s().sessions.remove(parent.id)).toBe(false);
    for (const id of [parent.id, child.id]) {
      expect(await s().sessions.get(id)).toBeNull();
      expect(await s().messages.list(id)).toEqual([]);
      expect(await s().context.load(id)).toEqual([]);
      expect(await s().state.getTodos(id)).toEqual([]);
      expect(await s().state.getScratchpad(id)).toEqual([]);
    }
  });

  it('appends messages in order with seq, plan flags, thinking and display-only rows', async () => {
    const session = newSession();
    await s().sessions.create(session);
    const m = s().messages;
    await m.append(session.id, { role: 'user', content: 'read the README' });
    await m.append(session.id, { role: 'assistant', content: '1. read\n2. summarise', }, { isPlan: true });
    await m.append(session.id, {
      role: 'assistant',
      content: '',
      thinking: 'I should look at the file first.',
      tool_calls: [{ id: 'call_1', name: 'read_file', arguments: { path: 'README.md' } }],
    });
    await m.append(session.id, { role: 'tool', content: '# navi', tool_name: 'read_file', tool_call_id: 'call_1' });
    await m.append(session.id, { role: 'assistant', content: '(shown to the user only)' }, { toContext: false });

    const display = await m.list(session.id);
    expect(display.map((r) => [r.seq, r.role, r.isPlan])).toEqual([
      [1, 'user', false],
      [2, 'assistant', true],
      [3, 'assistant', false],
      [4, 'tool', false],
      [5, 'assistant', false],
    ]);
    expect(display[2]).toMatchObject({ thinking: 'I should look at the file first.' });
    expect(display[0]).not.toHaveProperty('thinking');
    expect(display[3]).toMatchObject({ tool_name: 'read_file', tool_call_id: 'call_1' });
    expect(display[4]?.createdAt).toBeInstanceOf(Date);

    const view = await s().context.load(session.id);
    // The model's view keeps the reasoning (templates that render every turn's need it back,
    // byte for byte) and the call ids, and has no display-only rows.
    expect(view).toEqual([
      { role: 'user', content: 'read the README' },
      { role: 'assistant', content: '1. read\n2. summarise' },
      {
        role: 'assistant',
        content: '',
        thinking: 'I should look at the file first.',
        tool_calls: [{ id: 'call_1', name: 'read_file', arguments: { path: 'README.md' } }],
      },
      { role: 'tool', content: '# navi', tool_name: 'read_file', tool_call_id: 'call_1' },
    ]);
  });

  it('continues seq where an earlier process left off', async () => {
    const session = newSession();
    await s().sessions.create(session);
    await s().messages.append(session.id, { role: 'user', content: 'one' });
    await s().messages.append(session.id, { role: 'assistant', content: 'two' });

    const reopened = await backend.reopen();
    await reopened.messages.append(session.id, { role: 'user', content: 'three' });
    expect((await reopened.messages.list(session.id)).map((r) => [r.seq, r.content])).toEqual([
      [1, 'one'],
      [2, 'two'],
      [3, 'three'],
    ]);
    expect((await reopened.context.load(session.id)).map((r) => r.content)).toEqual(['one', 'two', 'three']);
  });

  it('keeps tool calls byte-exact (key order, unicode, string arguments)', async () => {
    const session = newSession();
    await s().sessions.create(session);
    const calls: ChatMessage['tool_calls'] = [
      {
        id: 'call_9',
        name: 'edit_file',
        arguments: {
          path: 'src/ü.ts',
          old_string: 'a\tb\n"quoted" \\ é 😀',
          new_string: '',
          zeta: { z: 1, a: [3, 2, 1], m: null, nested: { y: true, b: 1.5 } },
        },
      },
      { name: 'shell', arguments: '{"command": not json' },
    ];
    await s().messages.append(session.id, { role: 'assistant', content: 'editing', tool_calls: calls });
    const [shown] = await s().messages.list(session.id);
    const [sent] = await s().context.load(session.id);
    expect(JSON.stringify(shown?.tool_calls)).toBe(JSON.stringify(calls));
    expect(JSON.stringify(sent?.tool_calls)).toBe(JSON.stringify(calls));
    // An empty list stays an empty list (not absent): the request is re-sent as it was.
    await s().messages.append(session.id, { role: 'assistant', content: 'x', tool_calls: [] });
    expect((await s().context.load(session.id))[1]).toEqual({ role: 'assistant', content: 'x', tool_calls: [] });
  });

  it('stores text with NUL characters instead of failing the run', async () => {
    const session = newSession();
    await s().sessions.create(session);
    await s().messages.append(session.id, { role: 'tool', content: 'bin\u0000ary', tool_name: 'read_file' });
    expect((await s().context.load(session.id))[0]?.content).toBe('bin\uFFFDary');
  });

  it('appending to a missing session is a StorageError', async () => {
    const err = await s()
      .messages.append('ghost-session', { role: 'user', content: 'hi' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect(err).toMatchObject({ code: 'session_not_found', exitCode: 1 });
    expect((err as Error).message).toContain('ghost-session');
  });

  it('replaces the context as a whole and keeps appending after it', async () => {
    const session = newSession();
    await s().sessions.create(session);
    for (let i = 1; i <= 6; i++) await s().messages.append(session.id, { role: 'user', content: `m${i}` });

    const compressed: ChatMessage[] = [
      { role: 'user', content: 'Summary of earlier work: …' },
      { role: 'assistant', content: 'ok', thinking: 'list first', tool_calls: [{ id: 'c', name: 'todo', arguments: { action: 'list' } }] },
      { role: 'tool', content: '[]', tool_name: 'todo', tool_call_id: 'c' },
    ];
    await s().context.replace(session.id, compressed);
    expect(await s().context.load(session.id)).toEqual(compressed);
    await s().messages.append(session.id, { role: 'user', content: 'next' });
    expect((await s().context.load(session.id)).map((r) => r.content)).toEqual([
      'Summary of earlier work: …',
      'ok',
      '[]',
      'next',
    ]);
    // The display buffer is never compressed.
    expect(await s().messages.list(session.id)).toHaveLength(7);

    await s().context.replace(session.id, []);
    expect(await s().context.load(session.id)).toEqual([]);
  });

  it('a context replace that fails part-way leaves the previous view intact', async () => {
    const session = newSession();
    await s().sessions.create(session);
    await s().messages.append(session.id, { role: 'user', content: 'keep me' });
    // 2500 rows span several INSERT chunks; the bad role is rejected by the database only in
    // the last one, after the delete and the first chunks ran.
    const view: ChatMessage[] = Array.from({ length: 2500 }, (_, i) => ({ role: 'user', content: `r${i}` }));
    view.push({ role: 'narrator' as ChatMessage['role'], content: 'bad' });
    await expect(s().context.replace(session.id, view)).rejects.toBeInstanceOf(StorageError);
    expect(await s().context.load(session.id)).toEqual([{ role: 'user', content: 'keep me' }]);

    await s().context.replace(session.id, view.slice(0, 2500));
    const loaded = await s().context.load(session.id);
    expect(loaded).toHaveLength(2500);
    expect(loaded[2499]?.content).toBe('r2499');
  });

  it('stores todos and scratchpad per session, replacing them whole', async () => {
    const session = newSession();
    const other = newSession();
    await s().sessions.create(session);
    await s().sessions.create(other);
    expect(await s().state.getTodos(session.id)).toEqual([]);
    expect(await s().state.getScratchpad(session.id)).toEqual([]);

    const todos: TodoItem[] = [
      { id: 1, text: 'read the failing test', status: 'done', validation: 'ran vitest: 1 failed' },
      { id: 2, text: 'fix parser', status: 'in_progress' },
      { id: 3, text: 'run checks', status: 'pending' },
    ];
    await s().state.setTodos(session.id, todos);
    const loaded = await s().state.getTodos(session.id);
    // Same keys in the same order (jsonb sorts them; tools print these to the model).
    expect(JSON.stringify(loaded)).toBe(JSON.stringify(todos));
    await s().state.setTodos(session.id, todos.slice(1));
    expect(await s().state.getTodos(session.id)).toEqual(todos.slice(1));
    expect(await s().state.getTodos(other.id)).toEqual([]);

    const entries: ScratchpadEntry[] = [
      { key: 'root_cause', kind: 'finding', value: 'off-by-one in tokenizer' },
      { key: 'npm test', kind: 'error', value: 'exit 1' },
    ];
    await s().state.setScratchpad(session.id, entries);
    expect(JSON.stringify(await s().state.getScratchpad(session.id))).toBe(JSON.stringify(entries));
    await s().state.setScratchpad(session.id, []);
    expect(await s().state.getScratchpad(session.id)).toEqual([]);

    await expect(s().state.setTodos('ghost', todos)).rejects.toMatchObject({ code: 'session_not_found' });
    // The copy kept in memory is not the caller's: changing what was written or read changes nothing.
    const mine = await s().state.getTodos(session.id);
    mine[0]!.status = 'done';
    expect(await s().state.getTodos(session.id)).toEqual(todos.slice(1));
  });

  it('reads todos and scratchpad back from the database in declaration key order', async () => {
    const session = newSession();
    await s().sessions.create(session);
    const todos: TodoItem[] = [{ id: 1, text: 'read the failing test', status: 'done', validation: 'ran vitest: 1 failed' }];
    const entries: ScratchpadEntry[] = [{ key: 'root_cause', kind: 'finding', value: 'off-by-one' }];
    await s().state.setTodos(session.id, todos);
    await s().state.setScratchpad(session.id, entries);
    // A later process has no copy in memory: what it reads is the jsonb row.
    const later = await backend.reopen();
    expect(JSON.stringify(await later.state.getTodos(session.id))).toBe(JSON.stringify(todos));
    expect(JSON.stringify(await later.state.getScratchpad(session.id))).toBe(JSON.stringify(entries));
  });

  defineAgentStateSuite(backend);
  defineLoopRunSuite(backend);

  it('close() can be called twice', async () => {
    const store = await backend.reopen();
    await store.close();
    await store.close();
    await backend.reopen();
  });
}
