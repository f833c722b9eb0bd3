// @ts-check
/**
 * The database worker thread started by `pglite-worker.ts`: one message in, one answer out,
 * matched by `id`. Plain CommonJS with JSDoc types (type-checked by `npm run typecheck`), so the
 * same file runs unbuilt from `src/` (vitest) and from `dist/store/` (scripts/build.js copies it
 * there as its own entry): nothing here may need a build step.
 *
 * @typedef {import('./pglite-worker.js').WorkerInput} WorkerInput
 * @typedef {import('./pglite-worker.js').Request & { id: number }} Message
 * @typedef {import('./pglite-worker.js').Reply} Reply
 * @typedef {import('@electric-sql/pglite').PGlite} PGlite
 * @typedef {import('@electric-sql/pglite').Results} Results
 * @typedef {{ name: string, types: number[] }} Prepared
 */
'use strict';
const threads = require('node:worker_threads');
// PGlite's WebAssembly on the baseline compiler only (wasm-baseline.cjs says why three flags).
// Set before the module is compiled.
/** @type {typeof import('./wasm-baseline.cjs')} */ (require('./wasm-baseline.cjs')).useBaselineWasmCompiler();
// workerData and a require() by path are `any`: the casts give them their types.
// eslint-disable-next-line @typescript-eslint/no-unsafe-assignment
const input = /** @type {WorkerInput} */ (threads.workerData);
const parentPort = /** @type {import('node:worker_threads').MessagePort} */ (threads.parentPort);
/** The reply id of the compiled WebAssembly module sent back (`WASM_MODULE_ID` in pglite-worker.ts). */
const WASM_MODULE_ID = -1;
// eslint-disable-next-line @typescript-eslint/no-unsafe-assignment
const pglite = /** @type {typeof import('@electric-sql/pglite')} */ (require(input.pgliteEntry));
const { PGlite, protocol, parse } = pglite;
const { serialize } = protocol;
/** @param {string} v */
const identity = (v) => v;
/** @type {PGlite} */
let db;
/** Serving the database to other processes (`serve`), until `close`. @type {{ close(): Promise<void> } | null} */
let wire = null;

/**
 * An error as a plain object that crosses to the main thread, with the driver's fields.
 * @param {unknown} err
 * @returns {Record<string, unknown> & { message: string }}
 */
function plain(err) {
  /** @type {Record<string, unknown> & { message: string }} */
  const out = { message: err instanceof Error ? err.message : describeThrown(err), name: err instanceof Error ? err.name : 'Error' };
  if (err !== null && typeof err === 'object') {
    const fields = /** @type {Record<string, unknown>} */ (err);
    for (const key of Object.keys(fields)) {
      const v = fields[key];
      if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[key] = v;
    }
  }
  return out;
}

/**
 * PGlite's file system (emscripten) throws ErrnoError objects that are not Errors and carry no
 * message: name the errno instead of "[object Object]".
 * @param {unknown} err
 */
function describeThrown(err) {
  if (err !== null && typeof err === 'object') {
    const e = /** @type {{ message?: unknown, errno?: unknown, name?: unknown }} */ (err);
    if (typeof e.message === 'string' && e.message !== '') return e.message;
    if (typeof e.errno === 'number') return (typeof e.name === 'string' ? e.name : 'error') + ' (errno ' + e.errno + ') in the PGlite file system';
  }
  return String(err);
}

// One thing at a time: a statement, or a whole transaction (BEGIN … COMMIT) whose statements
// then run in order without taking the lock again.
/** @type {Promise<unknown>} */
let lock = Promise.resolve();
/**
 * @template T
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
function exclusive(fn) {
  const run = lock.then(fn);
  lock = run.then(
    () => undefined,
    () => undefined,
  );
  return run;
}
/** @type {Map<number, { chain: Promise<unknown>, release: () => void }>} */
const txs = new Map();
let nextTx = 1;

// Named prepared statements: PGlite's query() parses and plans every statement anew (a
// multi-statement append took ~0.4 ms, ~0.1 ms once prepared). Bounded: past the limit, new
// statement texts run unprepared.
const MAX_PREPARED = 256;
/** @type {Map<string, Prepared>} */
const prepared = new Map();
let nextStatement = 1;

/** @param {Uint8Array[]} parts */
function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * @param {string} sql
 * @returns {Promise<Prepared | undefined>}
 */
async function statementFor(sql) {
  let st = prepared.get(sql);
  if (st !== undefined || prepared.size >= MAX_PREPARED) return st;
  const name = 'navi_' + nextStatement++;
  const { messages } = await db.execProtocol(concat([serialize.parse({ name, text: sql }), serialize.describe({ type: 'S', name }), serialize.sync()]));
  st = { name, types: parse.parseDescribeStatementResults(messages) };
  prepared.set(sql, st);
  return st;
}

/**
 * @param {Prepared} st
 * @param {Message & { op: 'query' }} m
 * @param {Record<number, (v: string) => string>} parsers
 */
async function runPrepared(st, m, parsers) {
  // Parameters serialised exactly as PGlite's own query() does.
  const values = m.params.map((v, i) => {
    if (v === null || v === undefined) return null;
    const serializer = db.serializers[/** @type {number} */ (st.types[i])];
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- as PGlite's query() does
    return serializer ? serializer(v) : /** @type {{ toString(): string }} */ (v).toString();
  });
  const { messages } = await db.execProtocol(
    concat([serialize.bind({ statement: st.name, values }), serialize.describe({ type: 'P' }), serialize.execute({}), serialize.sync()]),
  );
  return /** @type {Results} */ (parse.parseResults(messages, db.parsers, { rowMode: m.rowMode, parsers })[0]);
}

/**
 * @param {Message & { op: 'query' }} m
 * @returns {Promise<Results>}
 */
async function runQuery(m) {
  /** @type {Record<number, (v: string) => string>} */
  const parsers = {};
  for (const oid of m.rawOids) parsers[oid] = identity;
  const st = await statementFor(m.sql);
  if (st === undefined) return db.query(m.sql, m.params, { rowMode: m.rowMode, parsers });
  try {
    return await runPrepared(st, m, parsers);
  } catch (err) {
    // A table changed under a prepared statement so that its result shape differs: prepare again.
    if (!(err && /** @type {{ code?: unknown }} */ (err).code === '0A000')) throw err;
    prepared.delete(m.sql);
    await db.exec('deallocate ' + st.name);
    return runPrepared(/** @type {Prepared} */ (await statementFor(m.sql)), m, parsers);
  }
}

/** @param {Results} r */
function results(r) {
  return { rows: r.rows, fields: r.fields, affectedRows: r.affectedRows };
}

/**
 * @template T
 * @param {{ tx?: number }} m
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
function inTx(m, fn) {
  if (m.tx === undefined) return exclusive(fn);
  const entry = txs.get(m.tx);
  if (entry === undefined) return Promise.reject(new Error('navi: unknown transaction ' + m.tx));
  const run = entry.chain.then(fn);
  entry.chain = run.then(
    () => undefined,
    () => undefined,
  );
  return run;
}

/**
 * @param {Message} m
 * @returns {Promise<unknown>}
 */
async function handle(m) {
  switch (m.op) {
    case 'query':
      return inTx(m, async () => results(await runQuery(m)));
    case 'exec':
      return inTx(m, async () => (await db.exec(m.sql)).map(results));
    case 'begin': {
      const id = nextTx++;
      /** @type {() => void} */
      let release;
      /** @type {Promise<void>} */
      const held = new Promise((resolve) => (release = resolve));
      /** @type {Promise<number>} */
      const started = new Promise((resolve, reject) => {
        void exclusive(async () => {
          try {
            await db.exec('BEGIN');
          } catch (err) {
            // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- as thrown: plain() describes it
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
    case 'serve': {
      // The server's connections take the same lock as the statements above (pglite-wire-server.cjs).
      const { serveWire } = /** @type {typeof import('./pglite-wire-server.cjs')} */ (require('./pglite-wire-server.cjs'));
      wire = await serveWire({ db, exclusive, socketPath: m.socketPath });
      return null;
    }
    case 'close': {
      // Clients first: one holding the database mid-transaction is rolled back and lets go.
      const serving = wire;
      wire = null;
      await serving?.close();
      return exclusive(async () => {
        if (!db.closed) await db.close();
        return null;
      });
    }
    default:
      throw new Error('navi: unknown operation ' + String(/** @type {{ op: unknown }} */ (m).op));
  }
}

// What does not depend on the directory starts at once: compiling the WebAssembly and reading
// the file bundle (a worker started ahead of time has them ready when the directory is named).
// Should these files move in a PGlite release, PGlite finds them itself. A module this process
// compiled before comes with the input; one compiled here goes back to the process for the next
// worker (pglite-worker.ts `compiledWasm`).
const fs = require('node:fs');
const path = require('node:path');
const pgliteDir = path.dirname(input.pgliteEntry);
// The global WebAssembly object (lib.dom declares it; navi's types have only its namespace).
const wasm = /** @type {{ WebAssembly: { compile(bytes: Uint8Array): Promise<WebAssembly.Module> } }} */ (/** @type {unknown} */ (globalThis)).WebAssembly;
/** @type {Promise<{ pgliteWasmModule?: WebAssembly.Module, fsBundle?: Blob }>} */
const compiled =
  input.wasmModule !== undefined
    ? Promise.resolve(input.wasmModule)
    : wasm.compile(fs.readFileSync(path.join(pgliteDir, 'pglite.wasm'))).then((module) => {
        parentPort.postMessage(/** @type {Reply} */ ({ id: WASM_MODULE_ID, ok: true, value: module }));
        return module;
      });
const assets = Promise.all([compiled, fs.promises.readFile(path.join(pgliteDir, 'pglite.data'))]).then(
  ([pgliteWasmModule, data]) => ({ pgliteWasmModule, fsBundle: plainBundle(data) }),
  () => ({}),
);

/**
 * The 6 MB file bundle as PGlite reads it: it only calls `fsBundle.arrayBuffer()`. A real Blob
 * copies the bytes in and out again (~50–70 ms of a start); this hands over the buffer itself.
 * @param {Buffer} data
 * @returns {Blob}
 */
function plainBundle(data) {
  const whole = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength;
  const bytes = /** @type {ArrayBuffer} */ (whole ? data.buffer : data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
  return /** @type {Blob} */ (/** @type {unknown} */ ({ arrayBuffer: () => Promise.resolve(bytes) }));
}
/** @type {Promise<{ dataDir: string, startParams: string[] }>} */
const where =
  input.dataDir !== undefined
    ? Promise.resolve(/** @type {{ dataDir: string, startParams: string[] }} */ (input))
    : new Promise((resolve) => parentPort.once('message', resolve));

void (async () => {
  try {
    const [ready, { dataDir, startParams }] = await Promise.all([assets, where]);
    db = await PGlite.create(dataDir, { ...ready, startParams: [...PGlite.defaultStartParams, ...startParams] });
  } catch (err) {
    parentPort.postMessage(/** @type {Reply} */ ({ id: 0, ok: false, error: plain(err) }));
    return;
  }
  parentPort.on('message', (/** @type {Message} */ m) => {
    handle(m).then(
      (value) => parentPort.postMessage(/** @type {Reply} */ ({ id: m.id, ok: true, value })),
      (err) => parentPort.postMessage(/** @type {Reply} */ ({ id: m.id, ok: false, error: plain(err) })),
    );
  });
  parentPort.postMessage(/** @type {Reply} */ ({ id: 0, ok: true, value: null }));
})();
