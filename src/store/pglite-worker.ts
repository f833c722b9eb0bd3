/**
 * Embedded PGlite in a worker thread. PGlite is PostgreSQL compiled to WebAssembly and runs on
 * the thread that calls it: opening a data directory is ~0.3–0.8 s of CPU, and every statement
 * (parse, plan, execute, write-ahead log) is main-thread work. In a worker, the open overlaps
 * navi's start-up and first model call, and the database work of each tool-loop iteration runs
 * on another core instead of inside the harness gap (SPEC §12).
 *
 * `PgliteInWorker` is the part of PGlite's client that drizzle's pglite driver uses — `query`
 * (with drizzle's pass-through parsers), `exec` and `transaction` — forwarded to the worker.
 * There, statements run one at a time as named prepared statements (PGlite's own `query` parses
 * and plans each one again), and a transaction holds the worker from BEGIN to COMMIT or ROLLBACK:
 * statements outside it wait, as they would in PGlite. Errors cross as plain objects with the
 * driver's fields (`code`, `detail`, `column`…) so `driver-errors.ts` reads them as before.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** What the worker is started with. */
interface WorkerInput {
  /** Absolute path of PGlite's CommonJS entry, resolved here (the worker has no module location). */
  pgliteEntry: string;
  /** Absent for a worker started ahead of time: the first message names the directory. */
  dataDir?: string;
  startParams?: string[];
}

/** A worker started before the directory was known (`prewarmPglite`), and whether it died. */
let prewarmed: { worker: Worker; dead: boolean } | null = null;

function startWorker(input: WorkerInput): Worker {
  return new Worker(WORKER_SOURCE, { eval: true, workerData: input, execArgv: [] });
}

function pgliteEntry(): string {
  return createRequire(import.meta.url).resolve('@electric-sql/pglite');
}

/**
 * Starts the database worker before the command knows its directory, so that loading PGlite and
 * compiling its WebAssembly (~50 ms) overlap navi's own start-up. Called when a command will
 * probably open the embedded database; the next `PgliteInWorker.open` uses it. It holds nothing
 * open: an unused one does not keep the process alive.
 */
export function prewarmPglite(): void {
  if (prewarmed !== null) return;
  const worker = startWorker({ pgliteEntry: pgliteEntry() });
  const entry = { worker, dead: false };
  worker.on('error', () => (entry.dead = true));
  worker.on('exit', () => (entry.dead = true));
  worker.unref();
  prewarmed = entry;
}

/** Stops a worker started ahead of time that will not be used (the store is PostgreSQL). */
export function discardPglitePrewarm(): void {
  void prewarmed?.worker.terminate();
  prewarmed = null;
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
const { PGlite, protocol, parse } = require(workerData.pgliteEntry);
const { serialize } = protocol;
const identity = (v) => v;
let db;

function plain(err) {
  const out = { message: err instanceof Error ? err.message : describeThrown(err), name: err instanceof Error ? err.name : 'Error' };
  if (err !== null && typeof err === 'object') {
    for (const key of Object.keys(err)) {
      const v = err[key];
      if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[key] = v;
    }
  }
  return out;
}

// PGlite's file system (emscripten) throws ErrnoError objects that are not Errors and carry no
// message: name the errno instead of "[object Object]".
function describeThrown(err) {
  if (err !== null && typeof err === 'object') {
    if (typeof err.message === 'string' && err.message !== '') return err.message;
    if (typeof err.errno === 'number') return (typeof err.name === 'string' ? err.name : 'error') + ' (errno ' + err.errno + ') in the PGlite file system';
  }
  return String(err);
}

// One thing at a time: a statement, or a whole transaction (BEGIN … COMMIT) whose statements
// then run in order without taking the lock again.
let lock = Promise.resolve();
function exclusive(fn) {
  const run = lock.then(fn);
  lock = run.then(() => undefined, () => undefined);
  return run;
}
const txs = new Map();
let nextTx = 1;

// Named prepared statements: PGlite's query() parses and plans every statement anew (a
// multi-statement append took ~0.4 ms, ~0.1 ms once prepared). Bounded: past the limit, new
// statement texts run unprepared.
const MAX_PREPARED = 256;
const prepared = new Map();
let nextStatement = 1;

function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

async function statementFor(sql) {
  let st = prepared.get(sql);
  if (st !== undefined || prepared.size >= MAX_PREPARED) return st;
  const name = 'navi_' + nextStatement++;
  const { messages } = await db.execProtocol(concat([serialize.parse({ name, text: sql }), serialize.describe({ type: 'S', name }), serialize.sync()]));
  st = { name, types: parse.parseDescribeStatementResults(messages) };
  prepared.set(sql, st);
  return st;
}

async function runPrepared(st, m, parsers) {
  // Parameters serialised exactly as PGlite's own query() does.
  const values = m.params.map((v, i) => {
    if (v === null || v === undefined) return null;
    const serializer = db.serializers[st.types[i]];
    return serializer ? serializer(v) : v.toString();
  });
  const { messages } = await db.execProtocol(
    concat([serialize.bind({ statement: st.name, values }), serialize.describe({ type: 'P' }), serialize.execute({}), serialize.sync()]),
  );
  return parse.parseResults(messages, db.parsers, { rowMode: m.rowMode, parsers })[0];
}

async function runQuery(m) {
  const parsers = {};
  for (const oid of m.rawOids) parsers[oid] = identity;
  const st = await statementFor(m.sql);
  if (st === undefined) return db.query(m.sql, m.params, { rowMode: m.rowMode, parsers });
  try {
    return await runPrepared(st, m, parsers);
  } catch (err) {
    // A table changed under a prepared statement so that its result shape differs: prepare again.
    if (!(err && err.code === '0A000')) throw err;
    prepared.delete(m.sql);
    await db.exec('deallocate ' + st.name);
    return runPrepared(await statementFor(m.sql), m, parsers);
  }
}

function results(r) {
  return { rows: r.rows, fields: r.fields, affectedRows: r.affectedRows };
}

function inTx(m, fn) {
  if (m.tx === undefined) return exclusive(fn);
  const entry = txs.get(m.tx);
  if (entry === undefined) return Promise.reject(new Error('navi: unknown transaction ' + m.tx));
  const run = entry.chain.then(fn);
  entry.chain = run.then(() => undefined, () => undefined);
  return run;
}

async function handle(m) {
  switch (m.op) {
    case 'query':
      return inTx(m, async () => results(await runQuery(m)));
    case 'exec':
      return inTx(m, async () => (await db.exec(m.sql)).map(results));
    case 'begin': {
      const id = nextTx++;
      let release;
      const held = new Promise((resolve) => (release = resolve));
      const started = new Promise((resolve, reject) => {
        exclusive(async () => {
          try {
            await db.exec('BEGIN');
          } catch (err) {
            reject(err);
            return;
          }
          txs.set(id, { chain: Promise.resolve(), release });
          resolve(id);
          await held;
        });
      });
      return started;
    }
    case 'end': {
      const entry = txs.get(m.tx);
      if (entry === undefined) return null;
      try {
        await entry.chain;
        if (m.commit) {
          const [done] = await db.exec('COMMIT');
          // COMMIT of a transaction in which a statement failed rolls it back instead.
          if (done && done.command === 'ROLLBACK') throw new Error('the transaction was rolled back');
        } else {
          await db.exec('ROLLBACK');
        }
      } finally {
        txs.delete(m.tx);
        entry.release();
      }
      return null;
    }
    case 'close':
      return exclusive(async () => {
        if (!db.closed) await db.close();
        return null;
      });
    default:
      throw new Error('navi: unknown operation ' + m.op);
  }
}

// What does not depend on the directory starts at once: compiling the WebAssembly and reading
// the file bundle (a worker started ahead of time has them ready when the directory is named).
// Should these files move in a PGlite release, PGlite finds them itself.
const fs = require('node:fs');
const path = require('node:path');
const pgliteDir = path.dirname(workerData.pgliteEntry);
const assets = Promise.all([
  WebAssembly.compile(fs.readFileSync(path.join(pgliteDir, 'pglite.wasm'))),
  fs.promises.readFile(path.join(pgliteDir, 'pglite.data')),
]).then(([pgliteWasmModule, data]) => ({ pgliteWasmModule, fsBundle: new Blob([data]) }), () => ({}));
const where = workerData.dataDir !== undefined ? Promise.resolve(workerData) : new Promise((resolve) => parentPort.once('message', resolve));

(async () => {
  try {
    const [ready, { dataDir, startParams }] = await Promise.all([assets, where]);
    db = await PGlite.create(dataDir, { ...ready, startParams: [...PGlite.defaultStartParams, ...startParams] });
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

/** How long closing may take before the worker is stopped anyway (a close takes ~15 ms). */
const CLOSE_TIMEOUT_MS = 5_000;

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
    const early = prewarmed;
    prewarmed = null;
    let worker: Worker;
    if (early !== null && !early.dead) {
      worker = early.worker;
      worker.ref();
      worker.postMessage({ dataDir, startParams });
    } else {
      worker = startWorker({ pgliteEntry: pgliteEntry(), dataDir, startParams });
    }
    const client = new PgliteInWorker(worker);
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

  /**
   * Closes the database in the worker, then the worker. Idempotent. Bounded: a close stuck behind
   * a statement that never ends (or a transaction nobody finished) must not keep navi from
   * exiting; the worker is then stopped as a killed process would be (PGlite recovers from its
   * write-ahead log on the next open).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    let timer: NodeJS.Timeout | undefined;
    try {
      if (this.exited === null) {
        const bounded = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_TIMEOUT_MS)));
        await Promise.race([this.send({ op: 'close' }), bounded]);
      }
    } finally {
      clearTimeout(timer);
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
