/**
 * The two PGlite drivers (`OpenStoreOptions.pgliteDriver`, issue 10 "the speed machinery behind
 * seams"): the worker thread with prepared statements is the fast path; PGlite's own client on
 * the main thread is the plain version beside it. The plain one is the oracle: the repository
 * contract holds on it, the same operations give the same answers on both, and a directory
 * written by one is read by the other.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import type { OpenStoreOptions, Store } from '../../src/store/types.js';
import { defineRepositorySuite, newSession } from './repository-suite.js';
import { tempDir } from './support.js';

type Driver = NonNullable<OpenStoreOptions['pgliteDriver']>;

const root = tempDir('pglite-drivers');
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('PGlite on the main thread (the plain driver)', () => {
  const dataDir = path.join(root, 'main-thread');
  let store: Store;
  beforeAll(async () => {
    store = await openStore({ dataDir, pgliteDriver: 'main-thread' });
  });
  afterAll(() => store?.close());
  defineRepositorySuite({
    store: () => store,
    reopen: async () => {
      await store.close();
      store = await openStore({ dataDir, pgliteDriver: 'main-thread' });
      return store;
    },
  });
});

/** One session's worth of writes and the reads a run makes, as plain data to compare. */
async function workload(store: Store): Promise<unknown> {
  const s = newSession({ title: 'drivers' });
  await store.sessions.create(s);
  await store.messages.append(s.id, { role: 'user', content: 'hello ünïcödé 🚀 \u2028' });
  await store.messages.append(s.id, { role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'read_file', arguments: { path: 'a.ts' } }] });
  await store.messages.append(s.id, { role: 'tool', content: 'x'.repeat(70_000), tool_name: 'read_file' });
  await store.sessions.addUsage(s.id, 10, 5);
  await store.memories.add('local', 'fact one', 'tool', s.id);
  const rows = await store.messages.list(s.id);
  const session = await store.sessions.get(s.id);
  const memories = await store.memories.list('local');
  return {
    messages: rows.map((m) => ({ role: m.role, content: m.content, tool_calls: m.tool_calls, tool_name: m.tool_name })),
    usage: session && { prompt: session.promptTokens, completion: session.completionTokens, title: session.title },
    memories: memories.map((m) => [m.fact, m.source]),
  };
}

describe('the worker driver against the plain one', () => {
  it('the same operations give the same answers', async () => {
    const results: unknown[] = [];
    for (const driver of ['worker', 'main-thread'] as Driver[]) {
      const store = await openStore({ dataDir: path.join(root, `same-${driver}`), pgliteDriver: driver });
      try {
        results.push(await workload(store));
      } finally {
        await store.close();
      }
    }
    expect(results[0]).toEqual(results[1]);
  }, 60_000);

  it('a directory written through one is read back through the other', async () => {
    const dataDir = path.join(root, 'crossed');
    let written: unknown;
    let store = await openStore({ dataDir, pgliteDriver: 'worker' });
    try {
      written = await workload(store);
    } finally {
      await store.close();
    }
    store = await openStore({ dataDir, pgliteDriver: 'main-thread' });
    try {
      const [session] = await store.sessions.list({ limit: 1 });
      expect(session).toBeDefined();
      const rows = await store.messages.list(session!.id);
      expect(rows.map((m) => ({ role: m.role, content: m.content, tool_calls: m.tool_calls, tool_name: m.tool_name }))).toEqual((written as { messages: unknown }).messages);
    } finally {
      await store.close();
    }
  }, 60_000);
});
