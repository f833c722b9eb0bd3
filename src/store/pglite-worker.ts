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
import { packagePath } from '../package-root.js';

/**
 * Set to true by scripts/build.js (esbuild `define`); absent when the sources run under tsx or
 * vitest.
 */
declare const NAVI_BUNDLED: boolean | undefined;

/**
 * The worker's code, `pglite-worker-thread.cjs`: beside this file in `src/store/`, and copied by
 * the build to `dist/store/` (the bundle's `import.meta.url` names the source file, so the
 * directory is chosen here). A path, not a search: nothing is read until the worker starts.
 */
function workerFile(): string {
  return packagePath(typeof NAVI_BUNDLED === 'undefined' ? 'src' : 'dist', 'store', 'pglite-worker-thread.cjs');
}

/** What the worker is started with (`pglite-worker-thread.cjs` reads it as `workerData`). */
export interface WorkerInput {
  /** Absolute path of PGlite's CommonJS entry, resolved here (as from `src/store/`, in the bundle too). */
  pgliteEntry: string;
  /** Absent for a worker started ahead of time: the first message names the directory. */
  dataDir?: string;
  startParams?: string[];
  /** PGlite's WebAssembly as this process compiled it for an earlier worker (absent: the worker compiles it). */
  wasmModule?: WebAssembly.Module;
}

/**
 * PGlite's WebAssembly, compiled once per process: the first worker compiles it and sends it
 * back under this reply id (WASM_MODULE_ID in pglite-worker-thread.cjs); each later worker —
 * a process that opens the embedded database again, such as a test's — starts with it
 * instead of compiling ~9 MB again (~0.1 s of CPU a time).
 */
const WASM_MODULE_ID = -1;
let compiledWasm: WebAssembly.Module | undefined;

/** A worker started before the directory was known (`prewarmPglite`), and whether it died. */
let prewarmed: { worker: Worker; dead: boolean } | null = null;

/**
 * Where main.cjs leaves the worker it starts before the CLI loads, for a command that will
 * probably open the embedded database (src/cli/main.cts; the same shape as `prewarmed`).
 */
export const EARLY_PGLITE_KEY = '__naviEarlyPglite';

/** The worker main.cjs started, taken once: later calls see none. */
function takeEarlyWorker(): { worker: Worker; dead: boolean } | null {
  const global = globalThis as Record<string, unknown>;
  const early = global[EARLY_PGLITE_KEY] as { worker: Worker; dead: boolean } | undefined;
  if (early === undefined) return null;
  delete global[EARLY_PGLITE_KEY];
  return early;
}

function startWorker(input: WorkerInput): Worker {
  const worker = new Worker(workerFile(), { workerData: compiledWasm === undefined ? input : { ...input, wasmModule: compiledWasm }, execArgv: [] });
  if (compiledWasm === undefined) {
    const keep = (reply: Reply): void => {
      if (reply.id !== WASM_MODULE_ID) return;
      if (reply.ok) compiledWasm ??= reply.value as WebAssembly.Module;
      worker.off('message', keep);
    };
    worker.on('message', keep);
  }
  return worker;
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
  prewarmed ??= takeEarlyWorker();
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
  void takeEarlyWorker()?.worker.terminate();
  prewarmed = null;
}

/** How long closing may take before the worker is stopped anyway (a close takes ~15 ms). */
const CLOSE_TIMEOUT_MS = 5_000;
/** How long stopping the worker may take before the process goes on without its 'exit'. */
const TERMINATE_TIMEOUT_MS = 1_000;

/** A message to the worker (sent with an `id`); its answer is a `Reply` with the same `id`. */
export type Request =
  | { op: 'query'; sql: string; params: unknown[]; rowMode: 'array' | 'object'; rawOids: number[]; tx?: number }
  | { op: 'exec'; sql: string; tx?: number }
  | { op: 'begin' }
  | { op: 'end'; tx: number; commit: boolean }
  | { op: 'serve'; socketPath: string }
  | { op: 'close' };

export type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: Record<string, unknown> & { message: string } };

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

  private constructor(
    private readonly worker: Worker,
    private readonly closeTimeoutMs: number,
  ) {
    worker.on('message', (reply: Reply) => this.settle(reply));
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) => this.fail(new Error(`the database worker stopped (exit code ${code})`)));
  }

  /**
   * Starts the worker and opens `dataDir` in it; rejects with PGlite's own error when that fails.
   * `closeTimeoutMs`: how long `close` waits for the database to close before stopping the worker
   * (navi keeps the default; a test of the stuck close need not wait 5 s for it).
   */
  static async open(dataDir: string, startParams: string[], { closeTimeoutMs = CLOSE_TIMEOUT_MS }: { closeTimeoutMs?: number } = {}): Promise<PgliteInWorker> {
    const early = prewarmed ?? takeEarlyWorker();
    prewarmed = null;
    let worker: Worker;
    if (early !== null && !early.dead) {
      worker = early.worker;
      worker.ref();
      worker.postMessage({ dataDir, startParams });
    } else {
      worker = startWorker({ pgliteEntry: pgliteEntry(), dataDir, startParams });
    }
    const client = new PgliteInWorker(worker, closeTimeoutMs);
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

  /**
   * Serves the database to other processes on a Unix socket (PostgreSQL wire protocol,
   * src/store/pglite-wire-server.cjs) until `close`. Rejects when the socket cannot be made.
   */
  async serve(socketPath: string): Promise<void> {
    await this.send({ op: 'serve', socketPath });
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
        const bounded = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.closeTimeoutMs)));
        await Promise.race([this.send({ op: 'close' }), bounded]);
      }
    } finally {
      clearTimeout(timer);
      // Bounded by a timer that holds the process: a worker stopped while it is still starting
      // (PGlite loading, initdb) may never emit 'exit', and with nothing else pending Node
      // drained the event loop and exited 0 — a failed command (an unknown profile) "succeeded".
      let stopTimer: NodeJS.Timeout | undefined;
      const stopped = new Promise<void>((resolve) => (stopTimer = setTimeout(resolve, TERMINATE_TIMEOUT_MS)));
      await Promise.race([this.worker.terminate(), stopped]);
      clearTimeout(stopTimer);
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
