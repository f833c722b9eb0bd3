/**
 * What every scenario needs: a fake Ollama playing a script, an empty working directory, a fresh
 * database of the backend under test, and `navi(...)` running the built CLI against all three.
 * Everything is torn down when the test finishes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect, onTestFinished } from 'vitest';
import { validateEvent } from '../../src/agent/events.js';
import { cleanEnv, makeTempDir, runNavi, stackLines, startNavi, type JsonObject, type NaviProcess, type NaviResult, type RunOptions } from '../support/cli.js';
import type { Backend, TestDatabase } from '../support/databases.js';
import { runNaviWhereItCan } from '../support/in-process-cli.js';
import { fakeOllama } from '../support/fake-ollama-harness.js';
import type { FakeOllama, FakeScript, RecordedRequest } from '../support/fake-ollama.js';

/**
 * Per-test hang guard for a scenario of one or two CLI runs (each about a second on PGlite, idle):
 * far above the real time, so a loaded CI machine never hits it — only a hang does.
 */
export const SCENARIO_TIMEOUT_MS = 60_000;
/** For scenarios of five or more CLI runs. */
export const LONG_SCENARIO_TIMEOUT_MS = 120_000;

/** A private temporary directory, removed when the test finishes. */
export function tempDir(prefix: string): string {
  const dir = makeTempDir(prefix);
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface NaviCallOptions {
  /** Added to the clean environment (after the database entries). */
  env?: Record<string, string>;
  stdin?: string | Buffer;
  timeoutMs?: number;
  signalAfter?: RunOptions['signalAfter'];
  /** Set `CI=1` (default true). */
  ci?: boolean;
  /** Pass `--ollama-host <fake>` (default true). */
  host?: boolean;
  /** Process working directory (default the scenario's). */
  cwd?: string;
  /**
   * Spawn the built CLI even where the run could go in the test's process: the test is about the
   * process itself (its pid in a lock, its exit through the bin).
   */
  spawn?: boolean;
}

export interface Scenario {
  fake: FakeOllama;
  db: TestDatabase;
  /** An empty private working directory (navi's cwd). */
  cwd: string;
  /** The environment a run gets (without `extra`). */
  env(extra?: Record<string, string>, ci?: boolean): Record<string, string>;
  navi(args: readonly string[], opts?: NaviCallOptions): Promise<NaviResult>;
  start(args: readonly string[], opts?: NaviCallOptions): NaviProcess;
  /** `/api/chat` requests the fake received, in order. */
  chats(): RecordedRequest[];
}

/** Starts the fake with `script`, makes a working directory and a fresh database. */
export async function scenario(backend: Backend, script: FakeScript): Promise<Scenario> {
  const fake = await fakeOllama(script);
  const db = await backend.fresh();
  const cwd = tempDir('cwd');

  const env = (extra: Record<string, string> = {}, ci = true): Record<string, string> =>
    cleanEnv({ ...db.env, ...extra }, { ci });
  const options = (opts: NaviCallOptions): RunOptions => ({
    cwd: opts.cwd ?? cwd,
    env: env(opts.env, opts.ci),
    ...(opts.stdin !== undefined ? { stdin: opts.stdin } : {}),
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    ...(opts.signalAfter !== undefined ? { signalAfter: opts.signalAfter } : {}),
  });
  const argv = (args: readonly string[], opts: NaviCallOptions): string[] =>
    opts.host === false ? [...args] : ['--ollama-host', fake.url, ...args];
  return {
    fake,
    db,
    cwd,
    env,
    navi: (args, opts = {}) => (opts.spawn === true ? runNavi : runNaviWhereItCan)(argv(args, opts), options(opts)),
    start: (args, opts = {}) => startNavi(argv(args, opts), options(opts)),
    chats: () => fake.requests.filter((r) => r.path === '/api/chat'),
  };
}

/**
 * The stream-json contract (SPEC §4) checked on a finished run: every line is a JSON object,
 * `seq` runs 0..n without gaps, `schema_version` is 1, one session id (the closing error's and result's may be ""), every event passes the
 * published schema, and the last one is the `result`. Returns the events.
 */
export function expectValidStream(run: NaviResult): JsonObject[] {
  expect(run.badLines, 'stdout lines that are not JSON objects').toEqual([]);
  expect(run.stdout.endsWith('\n'), 'stdout ends with a newline').toBe(true);
  expect(run.events.length).toBeGreaterThan(0);
  const problems = run.events.flatMap((ev, i) => validateEvent(ev).map((p) => `#${i} ${p}`));
  expect(problems).toEqual([]);
  expect(run.events.map((ev) => ev.seq)).toEqual(run.events.map((_, i) => i));
  expect(new Set(run.events.map((ev) => ev.schema_version))).toEqual(new Set([1]));
  // The closing error and result name no session ("") when none was stored (a new session whose model never answered).
  const closing = (ev: JsonObject): boolean => (ev.type === 'result' || ev.type === 'error') && ev.session_id === '';
  expect(new Set(run.events.filter((ev) => !closing(ev)).map((ev) => ev.session_id)).size).toBeLessThanOrEqual(1);
  expect(run.events.at(-1)?.type).toBe('result');
  expect(run.events.filter((ev) => ev.type === 'result')).toHaveLength(1);
  return run.events;
}

/** Event types with consecutive repeats collapsed (`thinking_delta` × 5 → one). */
export function typeSequence(events: readonly JsonObject[]): string[] {
  const out: string[] = [];
  for (const ev of events) if (out.at(-1) !== ev.type) out.push(String(ev.type));
  return out;
}

/** The `result` event of a stream-json run, or the single object of a json run. */
export function resultOf(run: NaviResult): JsonObject {
  const result = run.events.at(-1);
  if (result?.type !== 'result') throw new Error(`no result event; stdout: ${run.stdout}\nstderr: ${run.stderr}`);
  return result;
}

/** Events of one type. */
export function eventsOf(events: readonly JsonObject[], type: string): JsonObject[] {
  return events.filter((ev) => ev.type === type);
}

/** The `messages` array of a recorded chat request. */
export function requestMessages(request: RecordedRequest | undefined): JsonObject[] {
  const messages = request?.body?.messages;
  if (!Array.isArray(messages)) throw new Error('request has no messages');
  return messages as JsonObject[];
}

/**
 * A request's messages without its last one, which carries the per-call reminders (iteration
 * budget, goal anchor, anti-stall warning) and is never stored (SPEC §8). What is left must be
 * the prefix of the next request.
 */
export function withoutTransient(messages: readonly JsonObject[]): JsonObject[] {
  return messages.slice(0, -1);
}

/** Writes files into the working directory (parents created). */
export function writeFiles(cwd: string, files: Record<string, string>): void {
  for (const [rel, content] of Object.entries(files)) {
    const abs = path.join(cwd, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, content);
  }
}

/** A one-line diagnostic for `expect(..., message)`: what the run printed. */
export function describeRun(run: NaviResult): string {
  return `exit ${String(run.code)} signal ${String(run.signal)} timedOut ${String(run.timedOut)}\nstdout: ${run.stdout.slice(0, 2000)}\nstderr: ${run.stderr.slice(0, 2000)}`;
}

/**
 * Exit code, exactly one `navi: …` message on stderr (yargs' usage errors continue on a second
 * line) matching `pattern`, and no stack trace.
 */
export function expectFailure(run: NaviResult, code: number, pattern: RegExp): void {
  expect(run.code, describeRun(run)).toBe(code);
  expect(stackLines(run.stderr), 'no stack trace on stderr').toEqual([]);
  const lines = run.stderr.split('\n').filter((l) => l.startsWith('navi: '));
  expect(lines, `one navi: line in ${run.stderr}`).toHaveLength(1);
  expect(run.stderr).toMatch(pattern);
}

/** The json output of a failed run: exactly one valid result object on stdout. */
export function expectJsonResult(run: NaviResult, status: string, reason: string | RegExp): Record<string, unknown> {
  expect(run.lines, `stdout: ${run.stdout}`).toHaveLength(1);
  const result = JSON.parse(run.stdout) as Record<string, unknown>;
  expect(validateEvent(result)).toEqual([]);
  expect(result.type).toBe('result');
  expect(result.status).toBe(status);
  expect(result.exit_code).toBe(run.code);
  expect(result.reason).toMatch(reason);
  return result;
}

/** Polls `condition` every 25 ms; rejects after `timeoutMs` naming `what`. */
export async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
