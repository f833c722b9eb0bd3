/**
 * Shared pieces of the fault-injection suite (issue 5, item 1): process probes (leftover
 * processes, peak RSS), database consistency checks that hold whatever went wrong, the
 * well-formedness of a request the model receives, and the privileged fixtures some storage
 * faults need (a throwaway PostgreSQL server, tmpfs and read-only bind mounts) — each torn down
 * when its test finishes. Builds on the scenario helpers (`scenario`, `expectValidStream`, …).
 */
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, onTestFinished } from 'vitest';
import { isSummaryAck, isSummaryMessage } from '../../src/agent/compression/summary-message.js';
import type { ChatMessage } from '../../src/llm/types.js';
import type { Store, StoredMessage } from '../../src/store/types.js';
import { makeTempDir, stackLines, type JsonObject, type NaviResult } from '../support/cli.js';
import { databaseHandle, type Backend, type TestDatabase } from '../support/databases.js';
import { closedPort } from '../support/ports.js';
import { describeRun } from '../scenario/helpers.js';

export {
  LONG_SCENARIO_TIMEOUT_MS,
  SCENARIO_TIMEOUT_MS,
  describeRun,
  eventsOf,
  expectFailure,
  expectJsonResult,
  expectValidStream,
  requestMessages,
  resultOf,
  scenario,
  tempDir,
  until,
  writeFiles,
  type Scenario,
} from '../scenario/helpers.js';

const run = promisify(execFile);

/** Environment that makes stalls fail fast; healthy fake streams are far quicker than this. */
export const FAST_TIMEOUTS: Record<string, string> = {
  LLM_STREAM_FIRST_CHUNK_TIMEOUT: '2',
  LLM_STREAM_CHUNK_TIMEOUT: '0.5',
};

// ── processes ──

let markers = 0;

/**
 * A `sleep` duration no other process on the machine uses, to find the tool's process by: this
 * worker's pid and a counter in the fraction (unique without randomness).
 */
export function sleepMarker(seconds: number): string {
  return `${seconds}.${process.pid}${String(++markers).padStart(4, '0')}`;
}

/** Pids of processes whose command line contains `pattern` (pgrep -f), this process excluded. */
export function processesMatching(pattern: string): number[] {
  try {
    return execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number)
      .filter((pid) => pid !== process.pid);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

/** Kills what a failed test left behind (only processes carrying this test's unique marker). */
export function reapOnFinish(pattern: string): void {
  onTestFinished(() => {
    for (const pid of processesMatching(pattern)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  });
}

/** `/proc/<pid>/stat` fields after the command name: state, ppid, pgrp, … */
function statFields(pid: string): string[] | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined; // exited meanwhile
  }
}

/** CPU time `pid` has used so far, all its threads, in ms (from /proc; clock ticks of 10 ms). */
export function cpuMsOf(pid: number): number {
  const fields = statFields(String(pid));
  if (fields === undefined) return Number.NaN;
  // utime and stime are fields 14 and 15 of the stat line; `fields` starts at field 3.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The process group of `pid` (from /proc). */
export function processGroupOf(pid: number): number {
  const fields = statFields(String(pid));
  if (fields === undefined) throw new Error(`process ${pid} is gone`);
  return Number(fields[2]);
}

/**
 * Members of process group `pgid` that are still running. Zombies do not count: they are dead,
 * waiting for their parent — after navi exits, for init, which reaps slowly on these machines.
 */
export function liveGroupMembers(pgid: number): number[] {
  const live: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(entry);
    if (fields !== undefined && Number(fields[2]) === pgid && fields[0] !== 'Z') live.push(Number(entry));
  }
  return live;
}

/**
 * Figures measured along the way (peak RSS, stop latency, the message a failure printed), printed
 * to stderr after the file. Not a test: they assert nothing here, their bounds are `npm run
 * bench`'s (SPEC §12). Call at the top level of a test file.
 */
export function figuresForTheReport(): string[] {
  const lines: string[] = [];
  afterAll(() => {
    if (lines.length > 0) process.stderr.write(`\n[faults] ${lines.join('\n[faults] ')}\n`);
  });
  return lines;
}

/**
 * Peak RSS of a navi run, measured inside it: a `--require` preload writes
 * `process.resourceUsage().maxRSS` (getrusage, the kernel's high-water mark) when it exits,
 * however it exits (`process.exit` from a signal handler included).
 */
export interface RssProbe {
  /** Environment entries to add to the run. */
  env: Record<string, string>;
  /** Peak RSS in MiB, or undefined when the process died without running its exit handlers. */
  peakMb(): number | undefined;
}

export function rssProbe(): RssProbe {
  const dir = makeTempDir('rss');
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  const preload = path.join(dir, 'probe.cjs');
  const out = path.join(dir, 'maxrss');
  fs.writeFileSync(
    preload,
    `process.on('exit', () => { try { require('fs').writeFileSync(${JSON.stringify(out)}, String(process.resourceUsage().maxRSS)); } catch {} });\n`,
  );
  return {
    env: { NODE_OPTIONS: `--require=${preload}` },
    peakMb() {
      if (!fs.existsSync(out)) return undefined;
      return Number(fs.readFileSync(out, 'utf8')) / 1024;
    },
  };
}

// ── contract ──

/** Exit code in `codes`, no stack trace, at most one `navi:` line. */
export function expectCleanExit(result: NaviResult, codes: readonly number[]): void {
  expect(result.timedOut, `hung: ${describeRun(result)}`).toBe(false);
  expect(codes, describeRun(result)).toContain(result.code);
  expect(stackLines(result.stderr), 'no stack trace on stderr').toEqual([]);
  expect(result.stderr.split('\n').filter((l) => l.startsWith('navi: ')).length, result.stderr).toBeLessThanOrEqual(1);
}

// ── database consistency ──

/** A tool call as stored or sent: its name. */
interface CallLike {
  name?: unknown;
  function?: { name?: unknown };
}

function callName(call: CallLike): string {
  return String(call.function?.name ?? call.name);
}

/**
 * Every assistant message with tool calls is followed, at once, by exactly one tool message per
 * call, in order, each naming its call's tool; no tool message stands anywhere else. Holds for
 * stored messages and for a request's `messages` (wire shape). Returns the number of calls.
 */
export function expectToolPairs(messages: ReadonlyArray<{ role: unknown; tool_calls?: unknown; tool_name?: unknown }>, what: string): number {
  let calls = 0;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m?.role === 'tool') throw new Error(`${what}: tool message #${i} answers no tool call`);
    if (m?.role !== 'assistant' || !Array.isArray(m.tool_calls) || m.tool_calls.length === 0) continue;
    const wanted = (m.tool_calls as CallLike[]).map(callName);
    const results = messages.slice(i + 1, i + 1 + wanted.length);
    expect(
      results.map((r) => [r.role, r.tool_name]),
      `${what}: results of the ${wanted.length} calls of message #${i}`,
    ).toEqual(wanted.map((name) => ['tool', name]));
    calls += wanted.length;
    i += wanted.length;
  }
  return calls;
}

/** What a session holds after a run, checked for internal consistency. */
export interface StoredSession {
  messages: StoredMessage[];
  context: ChatMessage[];
}

/**
 * Reads the session and checks what must hold after any fault: display seqs 1..n without gaps
 * or duplicates; the context (the model's view) is the display buffer minus display-only rows,
 * in order, byte for byte; and every stored tool call has its result right after it — so the
 * session can be continued with a well-formed request.
 */
export async function expectConsistentSession(db: TestDatabase, sessionId: string, opts: { pairs?: boolean } = {}): Promise<StoredSession> {
  return db.withStore((store) => expectConsistentIn(store, sessionId, opts));
}

/** `expectConsistentSession` on an open store (several sessions, one open). */
export async function expectConsistentIn(store: Store, sessionId: string, opts: { pairs?: boolean } = {}): Promise<StoredSession> {
  const stored = { messages: await store.messages.list(sessionId), context: await store.context.load(sessionId) };
  const { messages, context } = stored;
  expect(messages.map((m) => m.seq), 'messages.seq runs 1..n').toEqual(messages.map((_, i) => i + 1));
  // The context is a subsequence of the display buffer (rows written display-only are skipped),
  // after the summary a compression may have put at its start (SPEC §8).
  const asContext = (m: ChatMessage): ChatMessage => ({
    role: m.role,
    content: m.content,
    ...(m.tool_calls ? { tool_calls: m.tool_calls } : {}),
    ...(m.tool_name ? { tool_name: m.tool_name } : {}),
  });
  let start = 0;
  while (start < context.length && (isSummaryMessage(context[start] as ChatMessage) || isSummaryAck(context[start] as ChatMessage))) start++;
  const view = context.slice(start);
  // After a compression the kept messages may be head+tail-cut copies (its safety net): then
  // they are matched by shape (role, tool names), otherwise byte for byte.
  const key = (m: ChatMessage): string =>
    start > 0 ? JSON.stringify([m.role, m.tool_name, m.tool_calls?.map((c) => c.name)]) : JSON.stringify(asContext(m));
  let j = 0;
  for (const m of messages) {
    if (j < view.length && key(m) === key(view[j] as ChatMessage)) j++;
  }
  expect(j, `context (${view.length} rows after ${start} summary rows) is the display buffer minus display-only rows: ${roles(view).join(' ')}`).toBe(view.length);
  // No row is stored twice: a repeat of a whole message (same role, content, calls) in a row.
  for (let i = 1; i < messages.length; i++) {
    const a = messages[i - 1] as StoredMessage;
    const b = messages[i] as StoredMessage;
    if (a.role === 'tool' || a.role === 'user') continue; // identical results or prompts can be legitimate
    expect(JSON.stringify(asContext(a)) === JSON.stringify(asContext(b)) && a.thinking === b.thinking, `message #${b.seq} duplicates #${a.seq}`).toBe(false);
  }
  if (opts.pairs !== false) {
    expectToolPairs(messages, 'stored messages');
    expectToolPairs(view, 'stored context');
  }
  return stored;
}

/** `role(tool calls):tool name` per message, for readable diffs. */
export function roles(messages: readonly ChatMessage[]): string[] {
  return messages.map((m) => `${m.role}${m.tool_calls ? `(${m.tool_calls.map((c) => c.name).join(',')})` : ''}${m.tool_name ? `:${m.tool_name}` : ''}`);
}

/** `roles` for a recorded request's wire messages (`tool_calls[].function.name`). */
export function wireRoles(messages: readonly JsonObject[]): string[] {
  return messages.map((m) => {
    const calls = Array.isArray(m.tool_calls) ? `(${(m.tool_calls as CallLike[]).map(callName).join(',')})` : '';
    return `${String(m.role)}${calls}${typeof m.tool_name === 'string' ? `:${m.tool_name}` : ''}`;
  });
}

/** The wire messages of a recorded request, checked for tool-call/result pairing. */
export function expectWellFormedRequest(messages: readonly JsonObject[], what = 'request'): void {
  expectToolPairs(messages as Array<{ role: unknown; tool_calls?: unknown; tool_name?: unknown }>, what);
  // Template-safe (SPEC §8): Ollama hoists every system message to the top of the prompt, and
  // renders a last assistant message open for the model to continue.
  expect(messages.map((m) => m.role).filter((r) => r === 'system'), `${what}: one system message`).toEqual(['system']);
  expect(messages[0]?.role, `${what}: the system message comes first`).toBe('system');
  expect(['user', 'tool'], `${what}: ends with a user or tool message`).toContain(messages.at(-1)?.role);
  for (const m of messages) {
    expect(typeof m.content, `${what}: every message has string content`).toBe('string');
    if (Array.isArray(m.tool_calls)) {
      for (const c of m.tool_calls as Array<{ function?: { arguments?: unknown } }>) {
        expect(typeof c.function?.arguments, `${what}: tool call arguments are objects`).toBe('object');
      }
    }
  }
}

// ── privileged fixtures ──

/** Whether this process may mount file systems (root with CAP_SYS_ADMIN). */
export function canMount(): boolean {
  if (process.getuid?.() !== 0) return false;
  const dir = makeTempDir('mountprobe');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { stdio: 'ignore' });
    execFileSync('umount', [dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function unmount(dir: string): void {
  try {
    execFileSync('umount', [dir], { stdio: 'ignore' });
  } catch {
    execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
  }
}

/** A tmpfs of `size` (mount's syntax: `2m`) on a fresh directory; unmounted and removed after the test. */
export function tmpfs(size: string): string {
  const dir = makeTempDir('tmpfs');
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir]);
  onTestFinished(() => {
    unmount(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** Bind-mounts `dir` read-only over itself; undone after the test. */
export function readOnlyBind(dir: string): void {
  execFileSync('mount', ['--bind', dir, dir]);
  onTestFinished(() => unmount(dir));
  execFileSync('mount', ['-o', 'remount,bind,ro', dir, dir]);
}

/** Fills the file system holding `dir` to the last byte (a file `filler` in `dir`). */
export function fillDisk(dir: string): void {
  const filler = path.join(dir, 'filler');
  const fd = fs.openSync(filler, 'a');
  const block = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) fs.writeSync(fd, block);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  }
  // The last partial block: fill byte by byte chunks down to nothing.
  for (let size = 32 * 1024; size >= 1; size = Math.floor(size / 2)) {
    try {
      for (;;) fs.writeSync(fd, block.subarray(0, size));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
    }
  }
  fs.closeSync(fd);
}

/** The newest PostgreSQL server binaries installed (`/usr/lib/postgresql/<v>/bin`), if any. */
export function postgresBinDir(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!fs.existsSync(base)) return undefined;
  const versions = fs
    .readdirSync(base)
    .filter((v) => fs.existsSync(path.join(base, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : path.join(base, versions[0], 'bin');
}

/** Why a private PostgreSQL server cannot be run here, or undefined when it can. */
export function whyNoOwnPostgres(): string | undefined {
  if (postgresBinDir() === undefined) return 'no PostgreSQL server binaries under /usr/lib/postgresql/*/bin';
  if (process.getuid?.() !== 0) return 'needs root to run initdb/pg_ctl as the postgres user';
  try {
    execFileSync('id', ['postgres'], { stdio: 'ignore' });
  } catch {
    return 'no postgres user';
  }
  return undefined;
}

/**
 * A throwaway PostgreSQL server of our own (never the shared one on 5432): a fresh cluster in a
 * temp directory owned by `postgres`, trust auth, on a free port, with its socket in that
 * directory. `restart()` and `stop()` act on it alone; `destroy()` stops it and removes it.
 */
export class OwnPostgres {
  readonly url: string;
  private constructor(
    private readonly bin: string,
    private readonly dir: string,
    readonly port: number,
  ) {
    this.url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  }

  private get dataDir(): string {
    return path.join(this.dir, 'data');
  }

  private static asPostgres(bin: string, tool: string, args: string[], timeoutMs = 60_000): Promise<unknown> {
    return run('runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args], { timeout: timeoutMs, cwd: '/' });
  }

  /** A new cluster, started; in a fresh directory under `parent` (default the OS temp dir). */
  static async create(parent = os.tmpdir()): Promise<OwnPostgres> {
    const bin = postgresBinDir();
    if (bin === undefined) throw new Error('no PostgreSQL binaries');
    const dir = fs.mkdtempSync(path.join(parent, 'navi-fault-pg-'));
    execFileSync('chown', ['postgres:postgres', dir]);
    const pg = new OwnPostgres(bin, dir, await closedPort());
    await OwnPostgres.asPostgres(bin, 'initdb', ['-D', pg.dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
    await pg.start();
    return pg;
  }

  async start(): Promise<void> {
    const options = `-p ${this.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${this.dir} -c fsync=off -c full_page_writes=off`;
    await OwnPostgres.asPostgres(this.bin, 'pg_ctl', ['-D', this.dataDir, '-l', path.join(this.dir, 'log'), '-o', options, '-w', '-t', '30', 'start']);
  }

  /** `pg_ctl stop -m fast`: open connections are terminated (57P01), the server shuts down. */
  async stop(): Promise<void> {
    await OwnPostgres.asPostgres(this.bin, 'pg_ctl', ['-D', this.dataDir, '-m', 'fast', '-w', '-t', '30', 'stop']);
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** The server's log (for failure messages). */
  log(): string {
    try {
      return fs.readFileSync(path.join(this.dir, 'log'), 'utf8');
    } catch {
      return '';
    }
  }

  async destroy(): Promise<void> {
    await this.stop().catch(() => undefined);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A handle on the database at `url` (PostgreSQL) or in `dataDir` (PGlite), to read it with navi's own code. */
export function databaseAt(where: { url: string } | { dataDir: string }): TestDatabase {
  if ('url' in where) return databaseHandle('postgres', { DATABASE_URL: where.url }, path.join(os.tmpdir(), 'navi-fault-no-pglite-here'), where.url);
  return databaseHandle('pglite', { NAVI_DATA_DIR: where.dataDir }, where.dataDir, undefined);
}

/** A `Backend` whose one database is `url` (our own server), for `scenario()`. */
export function serverBackend(url: string): Backend {
  return { kind: 'postgres', fresh: () => Promise.resolve(databaseAt({ url })) };
}
