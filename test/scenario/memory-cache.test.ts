/**
 * The memory cache belongs to one store (issue 11, bug 2). It lets the first model call of a
 * PGlite run go out before the database has opened, so it must never carry facts of another
 * store: two data directories in one parent each have their own (inside the data directory),
 * and a PostgreSQL run reads the facts from the server, whatever an embedded store remembered.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import type { FakeScript } from '../support/fake-ollama.js';
import { describeRun, requestMessages, scenario, SCENARIO_TIMEOUT_MS, type Scenario } from './helpers.js';

const FACT = 'The user deploys with blue-green releases';

/** A script whose first turn remembers FACT, then answers; later calls get the fake's plain "done.". */
const REMEMBER: FakeScript = {
  turns: [{ tool_calls: [{ name: 'remember', arguments: { fact: FACT } }] }, { content: 'Noted.' }],
};

const sentFact = (s: Scenario, chat: number): boolean => JSON.stringify(requestMessages(s.chats()[chat])).includes(FACT);

describe('the memory cache', () => {
  assertBuilt();

  forEachBackend(
    (backend) => {
      it('two data directories in one parent: a fact remembered in one never reaches the model in a run on the other', async () => {
        const s = await scenario(backend, REMEMBER);
        // A sibling store, migrated and empty, in the same parent directory.
        const other = path.join(path.dirname(s.db.dataDir), 'other-pgdata');
        fs.cpSync(s.db.dataDir, other, { recursive: true });

        const remembered = await s.navi(['run', 'remember how I deploy']);
        expect(remembered.code, describeRun(remembered)).toBe(0);
        const again = await s.navi(['run', 'hello again']);
        expect(again.code, describeRun(again)).toBe(0);
        expect(sentFact(s, 2), 'the store that remembered it sends it').toBe(true);

        const onOther = await s.navi(['run', 'hello'], { env: { NAVI_DATA_DIR: other } });
        expect(onOther.code, describeRun(onOther)).toBe(0);
        expect(sentFact(s, 3), 'the other store never remembered it').toBe(false);
        const list = await s.navi(['memory', 'list', '--output', 'json'], { env: { NAVI_DATA_DIR: other } });
        expect(list.code, describeRun(list)).toBe(0);
        expect(list.stdout).not.toContain(FACT);
        // Each cache lives inside its own data directory, none in the shared parent.
        expect(fs.readdirSync(path.dirname(s.db.dataDir)).filter((f) => f.includes('memory-cache'))).toEqual([]);
        expect(fs.readFileSync(path.join(s.db.dataDir, 'navi-memory-cache.json'), 'utf8')).toContain(FACT);
      }, SCENARIO_TIMEOUT_MS);
    },
    { only: 'pglite' },
  );

  forEachBackend(
    (backend) => {
      it('PostgreSQL: the facts come from the server — not from what a PGlite store beside it remembered, and a fact deleted by another client is not sent', async () => {
        const s = await scenario(backend, REMEMBER);
        const pglite = path.join(s.cwd, 'pgdata');
        // An embedded store remembers the fact (its cache holds it).
        const embedded = await s.navi(['run', 'remember how I deploy'], { env: { NAVI_DATA_DIR: pglite, DATABASE_URL: '' } });
        expect(embedded.code, describeRun(embedded)).toBe(0);
        const onServer = await s.navi(['run', 'hello']);
        expect(onServer.code, describeRun(onServer)).toBe(0);
        expect(sentFact(s, 2)).toBe(false);

        // The server remembers it, then another client deletes it: the next run does not send it.
        s.fake.setScript(REMEMBER);
        const remembered = await s.navi(['run', 'remember how I deploy']);
        expect(remembered.code, describeRun(remembered)).toBe(0);
        const store = await s.db.open();
        try {
          const facts = await store.memories.list('local');
          expect(facts.map((f) => f.fact)).toEqual([FACT]);
          for (const f of facts) await store.memories.remove('local', f.id);
        } finally {
          await store.close();
        }
        const after = await s.navi(['run', 'hello']);
        expect(after.code, describeRun(after)).toBe(0);
        expect(sentFact(s, s.chats().length - 1)).toBe(false);
      }, SCENARIO_TIMEOUT_MS);
    },
    { only: 'postgres' },
  );
});
