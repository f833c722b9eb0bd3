/**
 * Repository contract for the agent core's tables (SPEC §8, §9): compression archives and the
 * atomic compaction, long-term memories, planning logs. Registered by `defineRepositorySuite`.
 */
import { expect, it } from 'vitest';
import { StorageError } from '../../src/errors.js';
import { errorCode } from '../../src/store/driver-errors.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { PLANNING_LOG_CAP } from '../../src/store/planning-log-repository.js';
import type { ArchiveReason, NewArchive } from '../../src/store/types.js';
import { AWKWARD_JSON, createSession, type SuiteBackend } from './fixtures.js';

/** A context as the agent would have it before compressing. */
function history(n: number): ChatMessage[] {
  return Array.from({ length: n }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `m${i + 1}` }));
}

function archiveOf(messages: ChatMessage[], overrides: Partial<NewArchive> = {}): NewArchive {
  return { reason: 'preturn', summary: 'Summary: the user asked for m1…m4.', messages, tokensBefore: 52_000, tokensAfter: 9_000, ...overrides };
}

/** Registers the agent-state tests in the current `describe`. */
export function defineAgentStateSuite(backend: SuiteBackend): void {
  const s = () => backend.store();

  it('archives: stores what compression replaced, byte-exact, oldest first', async () => {
    const id = await createSession(s());
    const replaced: ChatMessage[] = [
      { role: 'user', content: 'read bin\u0000ary' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'c1', name: 'edit_file', arguments: AWKWARD_JSON }],
      },
      { role: 'tool', content: 'ok', tool_name: 'edit_file' },
    ];
    const first = await s().archives.add(id, archiveOf(replaced, { reason: 'midturn', tokensBefore: 1234.9 }));
    const second = await s().archives.add(id, archiveOf([], { reason: 'manual', summary: 'nothing \u0000 here' }));
    expect(first).toMatchObject({ sessionId: id, reason: 'midturn', tokensBefore: 1234, tokensAfter: 9000 });
    expect(first.createdAt).toBeInstanceOf(Date);
    expect(second.id).toBeGreaterThan(first.id);

    const listed = await s().archives.list(id);
    expect(listed.map((a) => [a.id, a.reason])).toEqual([
      [first.id, 'midturn'],
      [second.id, 'manual'],
    ]);
    // JSON text, not jsonb: key order, NUL and lone surrogates come back as they were.
    expect(JSON.stringify(listed[0]?.messages)).toBe(JSON.stringify(replaced));
    expect(listed[0]?.messages[0]?.content).toBe('read bin\u0000ary');
    expect(listed[1]?.summary).toBe('nothing \uFFFD here');
    expect(await s().archives.list('ghost')).toEqual([]);
    await expect(s().archives.add('ghost', archiveOf([]))).rejects.toMatchObject({ code: 'session_not_found' });
  });

  it('compactContext replaces the context and stores the archive together', async () => {
    const id = await createSession(s());
    for (const m of history(6)) await s().messages.append(id, m);
    const summary: ChatMessage[] = [{ role: 'user', content: 'Summary of m1…m4' }, ...history(6).slice(4)];

    const archive = await s().archives.compactContext(id, summary, archiveOf(history(4)));
    expect(await s().context.load(id)).toEqual(summary);
    expect(await s().archives.list(id)).toEqual([archive]);
    expect(archive.messages).toEqual(history(4));
    // Appends continue after the compacted view; the display buffer is untouched.
    await s().messages.append(id, { role: 'user', content: 'next' });
    expect((await s().context.load(id)).map((m) => m.content)).toEqual(['Summary of m1…m4', 'm5', 'm6', 'next']);
    expect(await s().messages.list(id)).toHaveLength(7);
  });

  it('compactContext that fails part-way changes nothing (context and archives as before)', async () => {
    const id = await createSession(s());
    for (const m of history(3)) await s().messages.append(id, m);
    const before = await s().context.load(id);

    // The context rows are written first; the archive insert then violates the reason check,
    // so the whole transaction must roll back.
    const bad = archiveOf(history(2), { reason: 'sideways' as ArchiveReason });
    const err = await s()
      .archives.compactContext(id, [{ role: 'user', content: 'summary' }], bad)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect(err).toMatchObject({ code: 'store_query_failed' });
    expect(errorCode(err)).toBe('23514');
    expect(await s().context.load(id)).toEqual(before);
    expect(await s().archives.list(id)).toEqual([]);
    // The seq counter was rolled back too: the next append lands right after the old view.
    await s().messages.append(id, { role: 'user', content: 'm4' });
    expect((await s().context.load(id)).map((m) => m.content)).toEqual(['m1', 'm2', 'm3', 'm4']);

    // A value that cannot be stored is refused before anything is written.
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const unserialisable = archiveOf([{ role: 'tool', content: 'x', tool_calls: [{ name: 'x', arguments: cyclic }] }]);
    await expect(s().archives.compactContext(id, [], unserialisable)).rejects.toMatchObject({
      code: 'store_value_not_json',
    });
    expect(await s().context.load(id)).toHaveLength(4);

    await expect(s().archives.compactContext('ghost', [], archiveOf([]))).rejects.toMatchObject({
      code: 'session_not_found',
    });
  });

  it('memories: remembered once per user, listed oldest first, forgotten per user', async () => {
    const sessionId = await createSession(s());
    const user = `u-${sessionId}`;
    const other = `v-${sessionId}`;
    const a = await s().memories.add(user, 'prefers tabs over spaces', 'tool', sessionId);
    expect(a).toMatchObject({ userId: user, fact: 'prefers tabs over spaces', source: 'tool', sessionId });
    expect(a.id).toMatch(/^m_[0-9a-z]{8}$/);
    expect(a.createdAt).toBeInstanceOf(Date);

    // Same fact again (even from extraction, without a session): the first record, unchanged.
    expect(await s().memories.add(user, 'prefers tabs over spaces', 'extraction')).toEqual(a);
    const b = await s().memories.add(user, 'works on navi', 'extraction');
    const c = await s().memories.add(user, 'lives in Lisbon', 'tool', null);
    const long = 'x'.repeat(20_000);
    const d = await s().memories.add(user, long, 'tool');
    expect(await s().memories.add(user, long, 'tool')).toEqual(d);
    const elsewhere = await s().memories.add(other, 'prefers tabs over spaces', 'tool');
    expect(elsewhere.id).not.toBe(a.id);

    // Oldest first, even when several were written within one millisecond.
    expect((await s().memories.list(user)).map((m) => m.id)).toEqual([a.id, b.id, c.id, d.id]);
    expect(await s().memories.list(other)).toEqual([elsewhere]);
    expect(await s().memories.list('nobody')).toEqual([]);

    expect(await s().memories.remove(other, a.id)).toBe(false);
    expect(await s().memories.remove(user, a.id)).toBe(true);
    expect(await s().memories.remove(user, a.id)).toBe(false);
    expect((await s().memories.list(user)).map((m) => m.fact)).toEqual(['works on navi', 'lives in Lisbon', long]);
    expect(await s().memories.list(other)).toHaveLength(1);

    // Forgotten, then remembered again: a new record at the end.
    const again = await s().memories.add(user, 'prefers tabs over spaces', 'tool');
    expect(again.id).not.toBe(a.id);
    expect((await s().memories.list(user)).at(-1)?.id).toBe(again.id);

    await expect(s().memories.add(user, 'new fact', 'tool', 'ghost')).rejects.toMatchObject({
      code: 'session_not_found',
    });
    await expect(s().memories.add(user, 'bad source', 'dream' as 'tool')).rejects.toBeInstanceOf(StorageError);
  });

  it('memories outlive the session that wrote them', async () => {
    const sessionId = await createSession(s());
    const user = `u-${sessionId}`;
    const kept = await s().memories.add(user, 'uses pnpm', 'extraction', sessionId);
    expect(await s().sessions.remove(sessionId)).toBe(true);
    expect(await s().memories.list(user)).toEqual([{ ...kept, sessionId: null }]);
  });

  it('planning logs: byte-exact entries, oldest first, capped at 20 per session', async () => {
    expect(PLANNING_LOG_CAP).toBe(20);
    const id = await createSession(s());
    const neighbour = await createSession(s());
    await s().planningLogs.append(neighbour, { phase: 1 });

    const first = await s().planningLogs.append(id, AWKWARD_JSON);
    expect(first).toMatchObject({ sessionId: id });
    expect(JSON.stringify(first.data)).toBe(JSON.stringify(AWKWARD_JSON));
    const [stored] = await s().planningLogs.list(id);
    expect(JSON.stringify(stored?.data)).toBe(JSON.stringify(AWKWARD_JSON));

    for (let i = 2; i <= 25; i++) await s().planningLogs.append(id, { entry: i, phase: i % 2 === 0 ? 'analysis' : 'plan' });
    const logs = await s().planningLogs.list(id);
    expect(logs).toHaveLength(20);
    expect(logs.map((l) => (l.data as { entry: number }).entry)).toEqual(Array.from({ length: 20 }, (_, i) => i + 6));
    // Other sessions keep theirs.
    expect(await s().planningLogs.list(neighbour)).toHaveLength(1);

    // Values JSON makes nothing of, and scalars, are stored as JSON would have them.
    const scalar = await s().planningLogs.append(neighbour, undefined);
    expect(scalar.data).toBeNull();
    expect((await s().planningLogs.append(neighbour, 'text')).data).toBe('text');
    await expect(s().planningLogs.append(neighbour, { n: 1n })).rejects.toMatchObject({ code: 'store_value_not_json' });
    await expect(s().planningLogs.append('ghost', {})).rejects.toMatchObject({ code: 'session_not_found' });
  });

  it('removing a session deletes its archives and planning logs', async () => {
    const id = await createSession(s());
    await s().messages.append(id, { role: 'user', content: 'hello' });
    await s().archives.compactContext(id, [{ role: 'user', content: 'summary' }], archiveOf(history(1)));
    await s().planningLogs.append(id, { plan: 'x' });
    expect(await s().sessions.remove(id)).toBe(true);
    expect(await s().archives.list(id)).toEqual([]);
    expect(await s().planningLogs.list(id)).toEqual([]);
    expect(await s().context.load(id)).toEqual([]);
  });
}
