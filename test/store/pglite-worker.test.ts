/**
 * The PGlite client that forwards to a worker thread: what drizzle's pglite driver relies on
 * (query with parameters and pass-through parsers, exec, transactions that commit or roll
 * back), errors with the driver's fields, and a worker that never holds the process open.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { discardPglitePrewarm, EARLY_PGLITE_KEY, PgliteInWorker, prewarmPglite } from '../../src/store/pglite-worker.js';
import { unpackTemplate } from '../../src/store/pgdata-template.js';
import { REPO_ROOT } from '../support/cli.js';
import { runChild, tempDir } from './support.js';

let dir: string;
let db: PgliteInWorker;

/**
 * A database directory named `name`, copied from one made once: creating a database (initdb)
 * takes seconds, opening an existing one a fraction of that, and no test here is about creating
 * one (the build creates one through this worker: scripts/build.js).
 */
function copyOfTemplate(name: string): string {
  const to = path.join(dir, name);
  fs.cpSync(path.join(dir, 'template'), to, { recursive: true });
  return to;
}

beforeAll(async () => {
  dir = tempDir('pglite-worker');
  // The template navi unpacks into a new data directory (dist/, made by the build); without
  // one, PGlite's initdb.
  fs.mkdirSync(path.join(dir, 'template'));
  if (!(await unpackTemplate(path.join(dir, 'template')))) {
    const template = await PgliteInWorker.open(path.join(dir, 'template'), []);
    await template.close();
  }
  db = await PgliteInWorker.open(copyOfTemplate('db'), []);
  await db.exec('create table t (id int primary key, at timestamptz not null default now(), doc jsonb)');
}, 60_000);

afterAll(async () => {
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('PgliteInWorker', () => {
  it('runs parameterised statements in object and array row modes', async () => {
    await db.query('insert into t (id, doc) values ($1, $2)', [1, JSON.stringify({ a: [1, 'x'] })]);
    const objects = await db.query('select id, doc from t where id = $1', [1]);
    expect(objects.rows).toEqual([{ id: 1, doc: { a: [1, 'x'] } }]);
    expect(objects.fields.map((f) => f.name)).toEqual(['id', 'doc']);
    const arrays = await db.query('select id from t', [], { rowMode: 'array' });
    expect(arrays.rows).toEqual([[1]]);
  });

  it("keeps timestamps as text with drizzle's pass-through parsers, and refuses any other parser", async () => {
    const typed = await db.query('select at from t where id = 1');
    expect((typed.rows[0] as { at: unknown }).at).toBeInstanceOf(Date);
    const raw = await db.query('select at from t where id = 1', [], { parsers: { 1184: (v: string) => v } });
    expect(typeof (raw.rows[0] as { at: unknown }).at).toBe('string');
    expect(() => db.query('select 1', [], { parsers: { 1184: (v: string) => v.length } })).toThrow(/pass-through/);
  });

  it('commits a transaction whose callback resolves, rolls back one that throws', async () => {
    const value = await db.transaction(async (tx) => {
      await tx.query('insert into t (id) values (2)');
      return (await tx.query('select count(*)::int as n from t')).rows[0];
    });
    expect(value).toEqual({ n: 2 });
    await expect(
      db.transaction(async (tx) => {
        await tx.query('insert into t (id) values (3)');
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect((await db.query('select id from t order by id')).rows).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it('statements outside a transaction wait for it, as in PGlite', async () => {
    const order: string[] = [];
    const tx = db.transaction(async (t) => {
      await t.query('insert into t (id) values (4)');
      // Another round trip: the worker answers in order, so a statement from outside that was
      // not held back until the commit would have been answered before this one.
      await t.query('select 1');
      order.push('tx done');
    });
    const outside = db.query('select count(*)::int as n from t').then((r) => {
      order.push('outside');
      return r.rows[0];
    });
    await Promise.all([tx, outside]);
    expect(order).toEqual(['tx done', 'outside']);
    expect(await outside).toEqual({ n: 3 });
  });

  it('errors carry the SQLSTATE and details the error mapping reads', async () => {
    const err = (await db.query('insert into t (id) values (1)').catch((e: unknown) => e)) as Record<string, unknown>;
    expect(err).toBeInstanceOf(Error);
    expect(err).toMatchObject({ code: '23505', message: expect.stringContaining('duplicate key') as string });
    expect(String(err.detail)).toContain('(id)=(1)');
    // The database is still usable after a failed statement.
    expect((await db.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });

  it('a table changed under a prepared statement: the statement is prepared again', async () => {
    await db.exec('create table shape (a int)');
    await db.query('insert into shape values ($1)', [1]);
    expect((await db.query('select * from shape')).rows).toEqual([{ a: 1 }]);
    await db.exec('alter table shape add column b text');
    expect((await db.query('select * from shape')).rows).toEqual([{ a: 1, b: null }]);
  });

  it('many distinct statements: past the prepared ones, the rest still run', async () => {
    for (let i = 0; i < 300; i++) {
      expect((await db.query(`select $1::int + ${i} as n`, [1])).rows).toEqual([{ n: 1 + i }]);
    }
  });

  it('an idle worker does not keep the process alive; a closed one refuses statements', async () => {
    const child = await runChild(`
      import { PgliteInWorker } from './src/store/pglite-worker.ts';
      const db = await PgliteInWorker.open(${JSON.stringify(copyOfTemplate('other'))}, []);
      console.log(JSON.stringify((await db.query('select 41 + 1 as n')).rows));
      // no close: the process must still end by itself
    `);
    expect(child.stdout.trim()).toBe('[{"n":42}]');
    expect(child.code).toBe(0);

    const other = await PgliteInWorker.open(path.join(dir, 'other'), []);
    await other.close();
    await other.close();
    await expect(other.query('select 1')).rejects.toThrow(/database worker stopped/);
  }, 60_000);

  it('close does not wait for a transaction nobody finishes', async () => {
    // The bound on close shortened from 5 s: what is tested is that close returns at all.
    const other = await PgliteInWorker.open(copyOfTemplate('stuck'), [], { closeTimeoutMs: 100 });
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => (inside = resolve));
    const abandoned = other.transaction(async () => {
      inside();
      await new Promise(() => undefined); // never settles
    });
    abandoned.catch(() => undefined);
    await entered;
    // The transaction never settles: close returning at all (after its bound) is the point; the
    // test's timeout is the hang guard.
    await other.close();
    await expect(other.query('select 1')).rejects.toThrow(/database worker stopped/);
  }, 60_000);

  it('a worker started ahead of time opens the directory named later; a discarded one is gone', async () => {
    prewarmPglite();
    prewarmPglite(); // once is enough
    const early = await PgliteInWorker.open(copyOfTemplate('early'), []);
    expect((await early.query('select 2 as two')).rows).toEqual([{ two: 2 }]);
    await early.close();

    prewarmPglite();
    discardPglitePrewarm();
    const fresh = await PgliteInWorker.open(path.join(dir, 'early'), []);
    expect((await fresh.query('select 3 as three')).rows).toEqual([{ three: 3 }]);
    await fresh.close();
  }, 60_000);

  it("the worker main.cjs starts before the CLI loads is adopted once, or stopped when the store is not PGlite", async () => {
    const startEarly = (): Worker => {
      // What src/cli/main.cts leaves for the store (EARLY_PGLITE_KEY): the same shape as prewarmPglite's.
      const worker = new Worker(path.join(REPO_ROOT, 'src/store/pglite-worker-thread.cjs'), {
        workerData: { pgliteEntry: createRequire(import.meta.url).resolve('@electric-sql/pglite') },
        execArgv: [],
      });
      const early = { worker, dead: false };
      worker.on('error', () => (early.dead = true));
      worker.on('exit', () => (early.dead = true));
      worker.unref();
      (globalThis as Record<string, unknown>)[EARLY_PGLITE_KEY] = early;
      return worker;
    };
    const first = startEarly();
    prewarmPglite();
    expect(EARLY_PGLITE_KEY in globalThis).toBe(false);
    const adopted = await PgliteInWorker.open(copyOfTemplate('adopted'), []);
    expect((await adopted.query('select 4 as four')).rows).toEqual([{ four: 4 }]);
    await adopted.close();
    expect(first.threadId).toBe(-1); // it was that worker, and it is gone

    const unused = startEarly();
    const gone = new Promise((resolve) => unused.once('exit', resolve));
    discardPglitePrewarm();
    await gone;
    expect(EARLY_PGLITE_KEY in globalThis).toBe(false);
  }, 60_000);

  it('an unused early worker does not keep the process alive', async () => {
    const child = await runChild(`
      import { prewarmPglite } from './src/store/pglite-worker.ts';
      prewarmPglite();
      console.log('started');
    `);
    expect(child).toMatchObject({ code: 0, stdout: 'started\n' });
  }, 60_000);

  it('a directory PGlite cannot open fails the open with its message', async () => {
    // Another PostgreSQL version's data directory: PGlite's own Error, its message carried over.
    const foreign = path.join(dir, 'pg99');
    fs.mkdirSync(foreign);
    fs.writeFileSync(path.join(foreign, 'PG_VERSION'), '99\n');
    await expect(PgliteInWorker.open(foreign, [])).rejects.toThrow('PGlite failed to initialize properly');
    // A path that is a file: PGlite throws an emscripten ErrnoError, which has no message; its
    // name and errno (54, ENOTDIR) come through, and the message names them (not "[object
    // Object]"). (openStore refuses such a path before PGlite.)
    const file = path.join(dir, 'not-a-dir');
    fs.writeFileSync(file, 'x');
    await expect(PgliteInWorker.open(file, [])).rejects.toMatchObject({
      name: 'ErrnoError',
      errno: 54,
      message: 'ErrnoError (errno 54) in the PGlite file system',
    });
  }, 60_000);
});
