/**
 * The holder's graceful leave (issue 18, item 1): when the process holding a PGlite directory
 * closes its store, a client in the middle of a transaction finishes it and hears every answer —
 * so a guest never loses the answer to a statement that committed — and an idle client is let go:
 * its next statement fails before it is sent (no socket), which a guest may always run again.
 */
import fs from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { lossPhase } from '../../src/store/guest-store.js';
import { openStore } from '../../src/store/open.js';
import { readEndpoint } from '../../src/store/shared-pglite.js';
import { tempDir } from './support.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) fs.rmSync(r, { recursive: true, force: true });
});

function connect(dataDir: string): postgres.Sql {
  const endpoint = readEndpoint(dataDir);
  if (!endpoint) throw new Error('the holder advertised no endpoint');
  return postgres({ path: endpoint.socket, username: 'postgres', database: 'postgres', max: 1, prepare: false, fetch_types: false, onnotice: () => {} });
}

describe('the holder leaves gracefully', () => {
  it('a client mid-transaction commits and hears its answers; an idle one is let go before anything is sent', async () => {
    const root = tempDir('sharing-close');
    roots.push(root);
    const dataDir = path.join(root, 'pgdata');
    const holder = await openStore({ dataDir });
    const busy = connect(dataDir);
    const idle = connect(dataDir);
    await idle`select 1`;
    let closing: Promise<void> | undefined;
    const committed = await busy.begin(async (tx) => {
      await tx`insert into sessions (id, kind, profile, cwd, title, model) values ('s_close_1', 'chat', 'default', '/', 'one', 'm')`;
      // The holder leaves while the transaction is open: it waits for it.
      closing = holder.close();
      await tx`insert into sessions (id, kind, profile, cwd, title, model) values ('s_close_2', 'chat', 'default', '/', 'two', 'm')`;
      return tx`select count(*)::int as n from sessions where id like 's_close_%'`;
    });
    expect(committed[0]).toEqual({ n: 2 });
    await closing;
    const err = await idle`select 1`.catch((e: unknown) => e);
    expect(lossPhase(err)).toBe('connect');
    await Promise.all([busy.end({ timeout: 0 }), idle.end({ timeout: 0 })]);

    const again = await openStore({ dataDir });
    try {
      expect((await again.sessions.list()).map((s) => s.title).sort()).toEqual(['one', 'two']);
    } finally {
      await again.close();
    }
  }, 60_000);
});
