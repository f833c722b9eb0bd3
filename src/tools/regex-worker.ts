/**
 * Regular expressions from the model, run where they cannot hang navi. V8's backtracking engine
 * can take exponential time (`^(a+)+$` on a long line of `a`s), and a match cannot be
 * interrupted on the thread that runs it: on the main thread, Ctrl-C, timeouts and heartbeats
 * would all wait for it. So matching runs in a worker thread, created on first use and reused;
 * at a deadline or a stop the worker is terminated (which does interrupt a running match) and
 * the next search starts a new one.
 */
import { Worker } from 'node:worker_threads';

/**
 * The 0-based indexes of the lines of each text for which `test` holds, at most `limit` in all.
 * Used on this thread for literal searches and, as source text, by the worker for regexes: it
 * must stay self-contained (no names from outside its body).
 */
export function matchLines(texts: readonly string[], test: (line: string) => boolean, limit: number): number[][] {
  let left = limit;
  return texts.map((text) => {
    const found: number[] = [];
    if (left <= 0) return found;
    const lines = text.split('\n');
    for (let i = 0; i < lines.length && left > 0; i++) {
      if (test(lines[i] ?? '')) {
        found.push(i);
        left--;
      }
    }
    return found;
  });
}

/**
 * The worker: `matchLines` with the pattern as the test. A string evaluated as CommonJS, so the
 * same code runs from `src/` (tests) and `dist/`.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const matchLines = ${matchLines.toString()};
parentPort.on('message', ({ id, pattern, texts, limit }) => {
  try {
    const re = new RegExp(pattern);
    parentPort.postMessage({ id, matches: matchLines(texts, (line) => re.test(line), limit) });
  } catch (err) {
    parentPort.postMessage({ id, error: String(err && err.message || err) });
  }
});
`;

/** Matching lines per text, or why there are none. */
export type MatchOutcome = { ok: true; matches: number[][] } | { ok: false; reason: 'timeout' | 'aborted' | 'failed'; detail?: string };

interface Pending {
  resolve: (outcome: MatchOutcome) => void;
  /** The worker the request went to: only its end fails the request. */
  worker: Worker;
}

interface WorkerMessage {
  id: number;
  matches?: number[][];
  error?: string;
}

let worker: Worker | null = null;
let nextId = 0;
const pending = new Map<number, Pending>();

/** Ends the requests still waiting on `w`. */
function failAll(w: Worker, outcome: MatchOutcome): void {
  for (const [id, p] of pending) {
    if (p.worker !== w) continue;
    pending.delete(id);
    p.resolve(outcome);
  }
}

function currentWorker(): Worker {
  if (worker !== null) return worker;
  const w = new Worker(WORKER_SOURCE, { eval: true, execArgv: [] });
  w.on('message', (m: WorkerMessage) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    p?.resolve(m.matches ? { ok: true, matches: m.matches } : { ok: false, reason: 'failed', detail: m.error ?? 'no answer' });
  });
  w.on('error', (err) => {
    if (worker === w) worker = null;
    failAll(w, { ok: false, reason: 'failed', detail: err.message });
  });
  w.on('exit', () => {
    if (worker === w) worker = null;
    failAll(w, { ok: false, reason: 'failed', detail: 'the search worker stopped' });
  });
  // An idle worker must not keep navi alive (a search in progress has its deadline timer for
  // that). After the listeners: adding a 'message' listener refs the worker again.
  w.unref();
  worker = w;
  return w;
}

/** Ends the worker (a runaway match with it); the next search starts a new one. */
function stopWorker(): void {
  const w = worker;
  worker = null;
  if (w !== null) void w.terminate();
}

/**
 * The 0-based indexes of the lines of each text that `pattern` matches (at most `limit` in all),
 * computed in the worker; `timeout` once `deadline` (a `Date.now()` time) passes, `aborted` when
 * `signal` fires. Either way the worker is terminated, so nothing keeps running.
 */
export function matchLinesInWorker(pattern: string, texts: readonly string[], limit: number, opts: { signal: AbortSignal; deadline: number }): Promise<MatchOutcome> {
  if (opts.signal.aborted) return Promise.resolve({ ok: false, reason: 'aborted' });
  if (Date.now() >= opts.deadline) return Promise.resolve({ ok: false, reason: 'timeout' });
  return new Promise((resolve) => {
    const id = nextId++;
    const finish = (outcome: MatchOutcome): void => {
      clearTimeout(timer);
      opts.signal.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const stop = (reason: 'timeout' | 'aborted'): void => {
      pending.delete(id);
      stopWorker();
      finish({ ok: false, reason });
    };
    const onAbort = (): void => stop('aborted');
    const timer = setTimeout(() => stop('timeout'), Math.max(0, opts.deadline - Date.now()));
    opts.signal.addEventListener('abort', onAbort, { once: true });
    const w = currentWorker();
    pending.set(id, { resolve: finish, worker: w });
    w.postMessage({ id, pattern, texts, limit });
  });
}
