// @ts-check
/**
 * The embedded database served to other navi processes (issue 11, item 6): while one process
 * holds a PGlite data directory (its lock), `navi runs show`, `sessions list` or a second run
 * in another terminal connect to it over a Unix socket, speaking the PostgreSQL wire protocol
 * (PGlite answers raw protocol messages itself: `execProtocolRawStream`), and read and write
 * through the holder's one database. Runs in the database worker thread (pglite-worker-thread.cjs),
 * beside the PGlite instance it serves; plain CommonJS with JSDoc types, like it.
 *
 * Why not `@electric-sql/pglite-socket`: it pins `@electric-sql/pglite` 0.5.14 as a peer (navi
 * ships 0.5.17; npm refuses the install) and pulls seven extension packages as peers; and its
 * queue interleaves the messages of one extended-protocol exchange (Parse … Sync) with other
 * clients' — and would interleave them with the holder's own statements, which it cannot see.
 *
 * Safety of a second writer: PGlite has one session. So a client gets the database for a whole
 * protocol unit — a simple Query, or extended messages up to and including Sync — and, when a
 * unit leaves a transaction open, until a unit ends outside it. Meanwhile everything else waits
 * on the same lock the holder's own statements and transactions take (`exclusive` in the
 * worker): nothing runs inside another's transaction or between another's Parse and Sync. A
 * client that disconnects mid-transaction is rolled back; one idle for `IDLE_MS` while it holds
 * the database is disconnected (and rolled back), so a stuck reader cannot stall the holder.
 * The socket lives in the data directory (0700) or, when that path is too long for a socket
 * address, in a private 0700 directory of its own: only the user can connect.
 */
'use strict';
const net = require('node:net');

/** A client holding the database (mid-unit or mid-transaction) is cut off after this much silence. */
const IDLE_MS = 30_000;
/** Closing the server: how long clients may finish what they run before they are cut off (and rolled back); below the 5 s the worker gets to close (pglite-worker.ts CLOSE_TIMEOUT_MS), so PGlite still closes cleanly. */
const STOP_MS = 3_000;
const SSL_REQUEST = 80877103;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;

/**
 * @typedef {import('@electric-sql/pglite').PGlite} PGlite
 * @typedef {<T>(fn: () => Promise<T>) => Promise<T>} Exclusive
 */

/**
 * Splits what a client sent into whole messages. The first message of a connection has no
 * type byte (startup, SSL request, cancel request); later ones are a type byte and a length.
 * @param {Buffer} buf
 * @param {boolean} started
 * @returns {{ kind: 'startup' | 'ssl' | 'cancel' | 'typed', bytes: Buffer } | null} null: incomplete
 */
function nextMessage(buf, started) {
  if (!started) {
    if (buf.length < 8) return null;
    const len = buf.readInt32BE(0);
    if (len < 8 || len > 10_000) throw new Error('bad startup packet length ' + len);
    if (buf.length < len) return null;
    const code = buf.readInt32BE(4);
    const kind = code === SSL_REQUEST ? 'ssl' : code === CANCEL_REQUEST ? 'cancel' : code === PROTOCOL_3 ? 'startup' : null;
    if (kind === null) throw new Error('unsupported protocol ' + code);
    return { kind, bytes: buf.subarray(0, len) };
  }
  if (buf.length < 5) return null;
  const len = buf.readInt32BE(1);
  if (len < 4) throw new Error('bad message length ' + len);
  if (buf.length < 1 + len) return null;
  return { kind: 'typed', bytes: buf.subarray(0, 1 + len) };
}

/**
 * Serves `db` on a Unix socket at `socketPath`. Resolves once listening.
 * @param {{ db: PGlite, exclusive: Exclusive, socketPath: string }} opts
 * @returns {Promise<{ close(): Promise<void> }>}
 */
async function serveWire({ db, exclusive, socketPath }) {
  /** Each open connection and how to stop it gracefully. @type {Map<net.Socket, () => void>} */
  const connections = new Map();
  /** @type {(() => void) | null} */
  let allClosed = null;
  const server = net.createServer((socket) => {
    /** @type {{ stop: () => void }} */
    const control = { stop: () => socket.destroy() };
    connections.set(socket, () => control.stop());
    void serveConnection(socket, db, exclusive, control).finally(() => {
      connections.delete(socket);
      if (connections.size === 0) allClosed?.();
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve(undefined));
  });
  return {
    // Graceful: no new connections; a client running a unit or a transaction finishes it and hears
    // its answer, then its connection ends. So a client never loses the answer to a statement
    // that committed here (src/store/guest-store.ts repeats only what is safe). STOP_MS bounds it.
    close: () =>
      new Promise((resolve) => {
        server.close();
        const done = () => {
          clearTimeout(timer);
          resolve(undefined);
        };
        const timer = setTimeout(() => {
          for (const s of connections.keys()) s.destroy();
        }, STOP_MS);
        allClosed = done;
        if (connections.size === 0) return done();
        for (const stop of connections.values()) stop();
      }),
  };
}

/**
 * One client connection: messages in order, each protocol unit under the database lock.
 * `control.stop` is set here: it ends the connection once no unit or transaction is open.
 * @param {net.Socket} socket
 * @param {PGlite} db
 * @param {Exclusive} exclusive
 * @param {{ stop: () => void }} control
 */
async function serveConnection(socket, db, exclusive, control) {
  /** @type {(() => void) | null} */
  let release = null;
  let started = false;
  let closed = false;
  let buf = Buffer.alloc(0);
  /** @type {Buffer[]} */
  const inbox = [];
  /** @type {(() => void) | null} */
  let wake = null;
  // Silence costs nothing while the client holds nothing (a run through the holder waits on
  // its model for minutes); silence while it holds the database stalls everyone: cut it off.
  const idle = () => {
    if (holding()) socket.destroy();
    else timer = setTimeout(idle, IDLE_MS);
  };
  let timer = setTimeout(idle, IDLE_MS);
  socket.on('data', (data) => {
    inbox.push(data);
    wake?.();
  });
  socket.on('close', () => {
    closed = true;
    wake?.();
  });
  socket.on('error', () => socket.destroy());

  /** Takes the database for this client until `release` is called. */
  const acquire = () =>
    new Promise((acquired) => {
      void exclusive(
        () =>
          new Promise((done) => {
            release = () => {
              release = null;
              done(undefined);
            };
            acquired(undefined);
          }),
      );
    });
  // A function, so the checker reads `release` as declared (it is set inside `acquire`).
  const letGo = () => {
    if (release !== null) release();
  };
  const holding = () => release !== null;
  /** @param {Uint8Array} data */
  const send = (data) => {
    if (!socket.destroyed) socket.write(data);
  };
  let stopping = false;
  let ended = false;
  /** Ends the connection after what was written (its answers) is flushed. */
  const end = () => {
    ended = true;
    socket.end();
  };
  control.stop = () => {
    stopping = true;
    if (!holding()) {
      end();
      closed = true;
      wake?.();
    }
  };

  try {
    for (;;) {
      if (inbox.length === 0) {
        if (closed) return;
        await new Promise((resolve) => (wake = () => resolve(undefined)));
        wake = null;
        continue;
      }
      buf = Buffer.concat([buf, ...inbox.splice(0)]);
      clearTimeout(timer);
      timer = setTimeout(idle, IDLE_MS);
      for (let m = nextMessage(buf, started); m !== null; m = nextMessage(buf, started)) {
        buf = buf.subarray(m.bytes.length);
        if (m.kind === 'ssl') {
          send(Buffer.from('N')); // no TLS on a private socket; the startup follows
          continue;
        }
        if (m.kind === 'cancel') return; // nothing to cancel in one session: the connection ends
        const type = m.kind === 'startup' ? 0 : m.bytes[0];
        if (type === 0x58) return; // Terminate
        if (stopping && !holding()) return end(); // a unit that arrives after the stop is not run
        if (!holding()) await acquire();
        if (closed) return;
        await db.execProtocolRawStream(new Uint8Array(m.bytes), { onRawData: send });
        started = true;
        // A unit ends with the startup, a simple Query or a Sync (each answered with ReadyForQuery).
        const unitEnd = type === 0 || type === 0x51 || type === 0x53;
        if (unitEnd && !db.isInTransaction()) letGo();
        if (stopping && !holding()) return end();
      }
    }
  } catch {
    socket.destroy();
  } finally {
    clearTimeout(timer);
    if (!ended) socket.destroy();
    if (holding()) {
      // Gone mid-unit or mid-transaction: end the exchange and undo what it left open.
      try {
        await db.execProtocolRaw(new Uint8Array([0x53, 0, 0, 0, 4])); // Sync
        if (db.isInTransaction()) await db.exec('ROLLBACK');
      } catch {
        // the next statement finds the session as PostgreSQL left it
      } finally {
        letGo();
      }
    }
  }
}

module.exports = { serveWire, nextMessage };
