/**
 * Issue 18 item 5: `remember` as the first tool call of a new session answered "Session … does
 * not exist" while the model went on ("Noted") and the run exited 0. The session's creation is
 * a held write on the SerialWriter (stored once the model answered), and `remember` writes to the
 * store directly: when the creation had not landed yet (a store still opening, a slower
 * connection of a pool), the memory's reference to the session failed. The held writes must have
 * landed before a tool acts on the first answer.
 */
import { describe, expect, it } from 'vitest';
import { StorageError } from '../../src/errors.js';
import type { MemorySource, NewSession } from '../../src/store/types.js';
import { MemoryStore } from '../support/memory-store.js';
import { collect, options, setup } from './helpers.js';

/** A store whose session creation lands a macrotask late, and whose memories refer to a session as the real one does. */
class SlowCreateStore extends MemoryStore {
  constructor() {
    super();
    const create = this.sessions.create;
    this.sessions.create = async (s: NewSession) => {
      await new Promise((resolve) => setImmediate(resolve));
      return create(s);
    };
    const add = this.memories.add;
    this.memories.add = (userId: string, fact: string, source: MemorySource, sessionId?: string | null) => {
      // As the database does (a foreign key to sessions; store/driver-errors.ts sessionNotFound).
      if (sessionId && !this.rows.has(sessionId)) return Promise.reject(new StorageError('session_not_found', `Session ${sessionId} does not exist.`));
      return add(userId, fact, source, sessionId);
    };
  }
}

describe('the first tool call of a new session', () => {
  it('remember finds its session: the held writes land before the first tool runs', async () => {
    const store = new SlowCreateStore();
    const { agent } = setup([{ toolCalls: [{ name: 'remember', arguments: { fact: 'prefers tabs' } }] }, { content: 'Noted.' }], store);
    const { events, outcome } = await collect(agent.runStream(options()));
    expect(outcome.stopReason).toBe('completed');
    const call = events.find((e) => e.type === 'tool_call' && e.name === 'remember');
    expect(call).toMatchObject({ ok: true, output: expect.stringMatching(/^Remembered \(m_\d+\): prefers tabs$/) as string });
    expect(await store.memories.list('local')).toEqual([expect.objectContaining({ fact: 'prefers tabs', sessionId: 's1' })]);
  });
});
