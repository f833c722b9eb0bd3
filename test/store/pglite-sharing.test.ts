/**
 * A second writer through the holder's socket stays safe (src/store/pglite-wire-server.cjs,
 * issue 11 item 6). PGlite has one session, so the server must never let one client's statement
 * run inside another's transaction or between another's Parse and Sync — the holder's own
 * statements included. These tests drive the socket with postgres.js, as another navi does.
 */
import fs from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import { readEndpoint } from '../../src/store/shared-pglite.js';
import type { Store } from '../../src/store/types.js';
import { newSession } from './repository-suite.js';
import { tempDir } from './support.js';

import { nextMessage } from '../../src/store/pglite-wire-server.cjs';

const root = tempDir('pglite-sharing');
const dataDir = path.join(root, 'pgdata');
let holder: Store;
const clients: postgres.Sql[] = [];

function client(): postgres.Sql {
  const endpoint = readEndpoint(dataDir);
  if (!endpoint) throw new Error('the holder advertised no endpoint');
  const sql = postgres({ path: endpoint.socket, username: 'postgres', database: 'postgres', max: 1, prepare: false, fetch_types: false, onnotice: () => {} });
  clients.push(sql);
  return sql;
}

beforeAll(async () => {
  holder = await openStore({ dataDir });
}, 60_000);
afterAll(async () => {
  for (const c of clients) await c.end({ timeout: 1 });
  await holder?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

describe('the holder serves its directory', () => {
  it('advertises a socket only its user can reach', () => {
    const endpoint = readEndpoint(dataDir);
    expect(endpoint).toMatchObject({ pid: process.pid });
    expect(fs.statSync(endpoint!.socket).isSocket()).toBe(true);
    expect(fs.statSync(path.dirname(endpoint!.socket)).mode & 0o077).toBe(0);
    expect(fs.statSync(path.join(dataDir, 'navi.endpoint')).mode & 0o777).toBe(0o600);
  });

  it("a client's open transaction holds the holder's writes back; its rollback does not take them along", async () => {
    const sql = client();
    const mine = newSession({ title: 'holder' });
    await holder.sessions.create(mine);
    const rolledBack = newSession({ title: 'client, rolled back' });
    let holderWrote = false;
    await sql
      .begin(async (tx) => {
        await tx`insert into sessions (id, kind, profile, cwd, title, model) values (${rolledBack.id}, 'chat', 'default', '/', ${rolledBack.title}, 'm')`;
        // The holder writes while the client's transaction is open: it must wait, not join it
        // (had it joined, the rollback below would take the holder's message along).
        void holder.messages.append(mine.id, { role: 'user', content: 'written by the holder' }).then(() => (holderWrote = true));
        await tx`select 1`;
        throw new Error('roll back');
      })
      .catch((err: Error) => expect(err.message).toBe('roll back'));
    await expect.poll(() => holderWrote, { timeout: 30_000 }).toBe(true);
    expect((await holder.messages.list(mine.id)).map((m) => m.content)).toEqual(['written by the holder']);
    expect(await holder.sessions.get(rolledBack.id)).toBeNull();
  }, 60_000);

  it('many statements from two clients and the holder at once: each gets its own answers', async () => {
    const [a, b] = [client(), client()];
    const session = newSession({ title: 'busy' });
    await holder.sessions.create(session);
    const work: Array<Promise<unknown>> = [];
    for (let i = 0; i < 40; i++) {
      work.push(a`select ${i}::int as n, 'a' as who`.then((rows) => expect(rows[0]).toEqual({ n: i, who: 'a' })));
      work.push(b`select ${i * 2}::int as n, 'b' as who`.then((rows) => expect(rows[0]).toEqual({ n: i * 2, who: 'b' })));
      work.push(holder.messages.append(session.id, { role: 'user', content: `m${i}` }));
    }
    await Promise.all(work);
    expect((await holder.messages.list(session.id)).map((m) => m.content)).toEqual(Array.from({ length: 40 }, (_, i) => `m${i}`));
  }, 60_000);

  it('a client that disconnects mid-transaction is rolled back and lets the holder go on', async () => {
    const sql = client();
    const ghost = newSession({ title: 'ghost' });
    await sql`begin`;
    await sql`insert into sessions (id, kind, profile, cwd, title, model) values (${ghost.id}, 'chat', 'default', '/', 'ghost', 'm')`;
    await sql.end({ timeout: 0 });
    const after = newSession({ title: 'after the ghost' });
    await holder.sessions.create(after);
    expect(await holder.sessions.get(ghost.id)).toBeNull();
    expect(await holder.sessions.get(after.id)).not.toBeNull();
  }, 60_000);
});

describe('nextMessage (framing)', () => {
  const typed = (type: string, body: number[]): Buffer => {
    const b = Buffer.alloc(5 + body.length);
    b.write(type, 0, 'latin1');
    b.writeInt32BE(4 + body.length, 1);
    Buffer.from(body).copy(b, 5);
    return b;
  };
  const startup = (code: number, len = 8): Buffer => {
    const b = Buffer.alloc(len);
    b.writeInt32BE(len, 0);
    b.writeInt32BE(code, 4);
    return b;
  };
  it.each([
    ['startup (protocol 3.0)', startup(196608, 16), false, 'startup', 16],
    ['SSL request', startup(80877103), false, 'ssl', 8],
    ['cancel request', startup(80877102, 16), false, 'cancel', 16],
    ['a typed message', typed('Q', [0x73, 0]), true, 'typed', 7],
    ['two typed messages: the first', Buffer.concat([typed('S', []), typed('Q', [0])]), true, 'typed', 5],
  ] as const)('%s', (_what, buf, started, kind, length) => {
    expect(nextMessage(buf, started)).toMatchObject({ kind, bytes: { length } });
  });
  it.each([
    ['half a length', Buffer.from([0, 0]), false],
    ['a startup still arriving', startup(196608, 16).subarray(0, 12), false],
    ['a typed message still arriving', typed('Q', [1, 2, 3]).subarray(0, 6), true],
  ] as const)('%s: null (wait for more)', (_what, buf, started) => {
    expect(nextMessage(buf, started)).toBeNull();
  });
  it.each([
    ['an unknown protocol', startup(12345), false],
    ['a negative length', Buffer.from([0x51, 0xff, 0xff, 0xff, 0xff]), true],
  ] as const)('%s: refused', (_what, buf, started) => {
    expect(() => nextMessage(buf, started)).toThrow();
  });
});
