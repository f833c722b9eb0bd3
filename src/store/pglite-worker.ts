/**
 * Embedded PGlite in a worker thread. PGlite is PostgreSQL compiled to WebAssembly and runs on
 * the thread that calls it: opening a data directory is ~0.3–0.8 s of CPU, and every statement
 * (parse, plan, execute, write-ahead log) is main-thread work. In a worker, the open overlaps
 * navi's start-up and first model call, and the database work of each tool-loop iteration runs
 * on another core instead of inside the harness gap (SPEC §12).
 *
 * `PgliteInWorker` is the part of PGlite's client that drizzle's pglite driver uses — `query`
 * (with drizzle's pass-through parsers), `exec` and `transaction` — forwarded to the worker. A
 * transaction holds PGlite's own transaction open in the worker until the callback here settles;
 * statements outside it wait, as they would in PGlite. Errors cross as plain objects with the
 * driver's fields (`code`, `detail`, `column`…) so `driver-errors.ts` reads them as before.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** What the worker is started with. */
interface WorkerInput {
  /** Absolute path of PGlite's CommonJS entry, resolved here (the worker has no module location). */
  pgliteEntry: string;
  dataDir: string;
  startParams: string[];
}

/**
 * The worker, as CommonJS evaluated from a string so the same code runs from `src/` (tests) and
 * `dist/`. One message in, one answer out, matched by `id`.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
// PGlite's 9 MB of WebAssembly: the baseline compiler alone opens ~3x faster than letting
// TurboFan optimise it in the background (see open.ts). Set before the module is compiled.
require('node:v8').setFlagsFromString('--liftoff-only');
const ROLLBACK = Symbol('rollback');
const identity = (v) => v;
const txs = new Map();
let nextTx = 1;
let db;

function plain(err) {
  const out = { message: err instanceof Error ? err.message : String(err), name: err instanceof Error ? err.name : 'Error' };
  if (err !== null && typeof err === 'object') {
    for (const key of Object.keys(err)) {
      const v = err[key];
      if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[key] = v;
    }
  }
  return out;
}

function target(tx) {
  if (tx === undefined) return db;
  const entry = txs.get(tx);
  if (entry === undefined) throw new Error('navi: unknown transaction ' + tx);
  return entry.tx;
}

async function handle(m) {
  switch (m.op) {
    case 'query': {
      const parsers = {};
      for (const oid of m.rawOids) parsers[oid] = identity;
      const r = await target(m.tx).query(m.sql, m.params, { rowMode: m.rowMode, parsers });
      return { rows: r.rows, fields: r.fields, affectedRows: r.affectedRows };
    }
    case 'exec': {
      const results = await target(m.tx).exec(m.sql);
      return results.map((r) => ({ rows: r.rows, fields: r.fields, affectedRows: r.affectedRows }));
    }
    case 'begin': {
      const id = nextTx++;
      const entry = { tx: null, finish: null, done: null };
      let started;
      const ready = new Promise((resolve) => (started = resolve));
      entry.done = db.transaction((tx) => {
        entry.tx = tx;
        started();
        return new Promise((resolve, reject) => (entry.finish = { resolve, reject }));
      });
      entry.done.catch(() => undefined);
      txs.set(id, entry);
      await Promise.race([ready, entry.done]);
      return id;
    }
    case 'end': {
      const entry = txs.get(m.tx);
      txs.delete(m.tx);
      if (entry === undefined) return null;
      if (m.commit) entry.finish.resolve();
      else entry.finish.reject(ROLLBACK);
      try {
        await entry.done;
      } catch (err) {
        if (err !== ROLLBACK) throw err;
      }
      return null;
    }
    case 'close':
      if (!db.closed) await db.close();
      return null;
    default:
      throw new Error('navi: unknown operation ' + m.op);
  }
}

(async () => {
  try {
    const { PGlite } = require(workerData.pgliteEntry);
    db = await PGlite.create(workerData.dataDir, { startParams: [...PGlite.defaultStartParams, ...workerData.startParams] });
  } catch (err) {
    parentPort.postMessage({ id: 0, ok: false, error: plain(err) });
    return;
  }
  parentPort.on('message', (m) => {
    handle(m).then(
      (value) => parentPort.postMessage({ id: m.id, ok: true, value }),
      (err) => parentPort.postMessage({ id: m.id, ok: false, error: plain(err) }),
    );
  });
  parentPort.postMessage({ id: 0, ok: true, value: null });
})();
`;

type Request =
  | { op: 'query'; sql: string; params: unknown[]; rowMode: 'array' | 'object'; rawOids: number[]; tx?: number }
  | { op: 'exec'; sql: string; tx?: number }
  | { op: 'begin' }
  | { op: 'end'; tx: number; commit: boolean }
  | { op: 'close' };

type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: Record<string, unknown> & { message: string } };

/** A result as PGlite returns it (what drizzle reads). */
export interface Results {
  rows: unknown[];
  fields: Array<{ name: string; dataTypeID: number }>;
  affectedRows?: number;
}

interface QueryOptions {
  rowMode?: 'array' | 'object';
  parsers?: Record<number, (value: string, typeId: number) => unknown>;
}

/** The statements of one open transaction (what drizzle calls on the transaction object). */
interface WorkerTransaction {
  query(sql: string, params?: unknown[], options?: QueryOptions): Promise<Results>;
  exec(sql: string): Promise<Results[]>;
  closed: boolean;
}

export class PgliteInWorker {
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private exited: Error | null = null;
  closed = false;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (reply: Reply) => this.settle(reply));
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) => this.fail(new Error(`the database worker stopped (exit code ${code})`)));
  }

  /** Starts the worker and opens `dataDir` in it; rejects with PGlite's own error when that fails. */
  static async open(dataDir: string, startParams: string[]): Promise<PgliteInWorker> {
    const input: WorkerInput = {
      pgliteEntry: createRequire(import.meta.url).resolve('@electric-sql/pglite'),
      dataDir,
      startParams,
    };
    const client = new PgliteInWorker(new Worker(WORKER_SOURCE, { eval: true, workerData: input, execArgv: [] }));
    try {
      await new Promise((resolve, reject) => client.pending.set(0, { resolve, reject }));
    } catch (err) {
      await client.worker.terminate();
      throw err;
    }
    client.idle();
    return client;
  }

  query(sql: string, params: unknown[] = [], options: QueryOptions = {}, tx?: number): Promise<Results> {
    const rawOids = Object.entries(options.parsers ?? {}).map(([oid, parse]) => {
      // drizzle passes parsers that keep timestamps and intervals as text; nothing else crosses.
      if (parse('2026-01-01 00:00:00', Number(oid)) !== '2026-01-01 00:00:00') throw new Error('navi: only pass-through parsers are supported');
      return Number(oid);
    });
    return this.send({ op: 'query', sql, params, rowMode: options.rowMode ?? 'object', rawOids, ...(tx !== undefined && { tx }) }) as Promise<Results>;
  }

  exec(sql: string, tx?: number): Promise<Results[]> {
    return this.send({ op: 'exec', sql, ...(tx !== undefined && { tx }) }) as Promise<Results[]>;
  }

  /** Commits when `fn` resolves, rolls back when it throws (and rethrows), as PGlite does. */
  async transaction<T>(fn: (tx: WorkerTransaction) => Promise<T>): Promise<T> {
    const id = (await this.send({ op: 'begin' })) as number;
    const tx: WorkerTransaction = {
      query: (sql, params, options) => this.query(sql, params, options, id),
      exec: (sql) => this.exec(sql, id),
      closed: false,
    };
    let result: T;
    try {
      result = await fn(tx);
    } catch (err) {
      tx.closed = true;
      await this.send({ op: 'end', tx: id, commit: false }).catch(() => undefined);
      throw err;
    }
    tx.closed = true;
    await this.send({ op: 'end', tx: id, commit: true });
    return result;
  }

  /** Closes the database in the worker, then the worker. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      if (this.exited === null) await this.send({ op: 'close' });
    } finally {
      await this.worker.terminate();
    }
  }

  private send(request: Request): Promise<unknown> {
    if (this.exited !== null) return Promise.reject(this.exited);
    const id = this.nextId++;
    // A statement in flight keeps the process alive until its answer; an idle worker does not
    // (a command that returns without closing the store still exits).
    if (this.pending.size === 0) this.worker.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...request, id });
    });
  }

  private idle(): void {
    if (this.pending.size === 0) this.worker.unref();
  }

  private settle(reply: Reply): void {
    const waiting = this.pending.get(reply.id);
    if (waiting === undefined) return;
    this.pending.delete(reply.id);
    this.idle();
    if (reply.ok) waiting.resolve(reply.value);
    else waiting.reject(Object.assign(new Error(reply.error.message), reply.error));
  }

  /** The worker is gone: every statement still waiting fails, and so does every later one. */
  private fail(err: Error): void {
    this.exited ??= err;
    for (const waiting of this.pending.values()) waiting.reject(err);
    this.pending.clear();
  }
}
