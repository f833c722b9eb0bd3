/**
 * navi benchmark (SPEC §12, issue 2 "Targets"): `npm run bench` (builds, then runs this file).
 *
 *   ./node_modules/.bin/tsx bench/run.ts [--json] [--runs N] [--startup-runs N] [--root DIR]
 *
 * Prints one table — figure | target | measured | pass/fail — after an environment line.
 * Everything runs the built CLI (`node dist/cli/main.cjs`, what the `navi` bin runs) as a
 * subprocess against the fake Ollama server of test/support with zero model latency, on
 * embedded PGlite (an existing, migrated data directory: what a returning user has) and on
 * PostgreSQL (a `navi_bench_<pid>` database created for the run and dropped after it; skipped
 * when no server answers). Timings of the model side come from the fake server itself
 * (`performance.now()` when a request's body has arrived and when a response has been flushed),
 * so a "gap" is exactly the harness: parsing, events, tools, database writes, request building.
 *
 * Options:
 *   --json             print the rows (and raw samples) as JSON instead of the table
 *   --runs N           one-shot runs per backend (default 10)
 *   --startup-runs N   `--version` / `node -e ''` pairs (default 30)
 *   --root DIR         package root holding dist/ (default: this repository)
 *   --pg-admin URL     where to create the bench database (default: DATABASE_URL, else
 *                      postgres://postgres@127.0.0.1:5432/postgres)
 *   --keep             keep the temporary directory (its path is printed)
 *   --only LIST        measure only these figures (comma-separated): startup, oneshot (also gives
 *                      the first request size), gap, reuse (rendered-prompt reuse), rss, growth,
 *                      stop — for quick A/B work
 *   --node-options S   NODE_OPTIONS for the navi processes (to try V8 flags; not for the record)
 * Nothing is written into the repository; temporary files live under the OS temp directory.
 * Companions: bench/profile.ts (where the time goes: imports, PGlite open, CPU profiles) and
 * bench/compare.ts (A/B timing of several builds, interleaved).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type PostgresFactory from 'postgres';
import { startFakeOllama, type FakeOllama, type FakeScript, type FakeTurn } from '../test/support/fake-ollama.js';
import { prefixBreaks, prefixKept } from '../test/support/render-prompt.js';

// ---------------------------------------------------------------------------------------------
// Options and environment

interface Options {
  json: boolean;
  runs: number;
  startupRuns: number;
  root: string;
  pgAdmin: string;
  keep: boolean;
  only: Set<string> | null;
  nodeOptions: string | undefined;
}

const FIGURES = ['startup', 'oneshot', 'gap', 'reuse', 'rss', 'growth', 'stop'];

function parseOptions(argv: string[]): Options {
  const value = (flag: string): string | undefined => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const int = (flag: string, dflt: number): number => {
    const raw = value(flag);
    const n = raw === undefined ? dflt : Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} needs a positive integer`);
    return n;
  };
  const repoRoot = fileURLToPath(new URL('..', import.meta.url));
  return {
    json: argv.includes('--json'),
    runs: int('--runs', 10),
    startupRuns: int('--startup-runs', 30),
    root: path.resolve(value('--root') ?? repoRoot),
    pgAdmin: value('--pg-admin') ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    keep: argv.includes('--keep'),
    only: parseOnly(value('--only')),
    nodeOptions: value('--node-options'),
  };
}

function parseOnly(raw: string | undefined): Set<string> | null {
  if (raw === undefined) return null;
  const names = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const unknown = names.filter((n) => !FIGURES.includes(n));
  if (names.length === 0 || unknown.length > 0) throw new Error(`--only takes a comma-separated list of ${FIGURES.join(', ')}`);
  return new Set(names);
}

const opts = parseOptions(process.argv.slice(2));
const want = (figure: string): boolean => opts.only === null || opts.only.has(figure);
const MAIN = path.join(opts.root, 'dist', 'cli', 'main.cjs');
const MODEL = 'qwen3:8b';
/** Large enough that 1000 messages of history never trip the context-size check. */
const BIG_CTX = 262_144;

// ---------------------------------------------------------------------------------------------
// Small statistics helpers

function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return (s[lo] ?? 0) + ((s[hi] ?? 0) - (s[lo] ?? 0)) * (pos - lo);
}
const median = (xs: number[]): number => quantile(xs, 0.5);
const p90 = (xs: number[]): number => quantile(xs, 0.9);
const ms = (x: number, digits = 0): string => (Number.isFinite(x) ? `${x.toFixed(digits)} ms` : 'n/a');
const mb = (kb: number): string => `${(kb / 1024).toFixed(1)} MB`;

// ---------------------------------------------------------------------------------------------
// Results table

type Verdict = 'pass' | 'FAIL' | 'skip' | 'info' | 'error';

interface Row {
  figure: string;
  target: string;
  measured: string;
  verdict: Verdict;
  /** Raw numbers for --json. */
  data?: Record<string, unknown>;
}

const rows: Row[] = [];

function row(figure: string, target: string, measured: string, verdict: Verdict, data?: Record<string, unknown>): void {
  rows.push({ figure, target, measured, verdict, ...(data ? { data } : {}) });
  if (!opts.json) process.stderr.write(`  · ${figure}: ${measured} [${verdict}]\n`);
}

function check(ok: boolean): Verdict {
  return ok ? 'pass' : 'FAIL';
}

function printTable(envLine: string): void {
  const head = ['figure', 'target', 'measured', 'pass/fail'];
  const body = rows.map((r) => [r.figure, r.target, r.measured, r.verdict === 'info' ? '' : r.verdict]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ').trimEnd();
  const out = [envLine, '', line(head), widths.map((w) => '-'.repeat(w)).join('-|-'), ...body.map(line)];
  process.stdout.write(`${out.join('\n')}\n`);
}

// ---------------------------------------------------------------------------------------------
// The fake Ollama server, with precise timestamps of our own

interface Timing {
  method: string;
  path: string;
  /** Request headers arrived. */
  tHead: number;
  /** Request body fully received (what the model server can start prefilling from). */
  tBody?: number;
  /** Response flushed to the socket (the last byte the harness waits for). */
  tFinish?: number;
  /** Response or connection closed (client abort included). */
  tClose?: number;
}

class TimedFake {
  readonly timings: Timing[] = [];
  /** Called as each chat request's body has arrived. */
  onChat: (() => void) | undefined;

  private constructor(readonly fake: FakeOllama) {}

  static async start(): Promise<TimedFake> {
    const fake = await startFakeOllama({ turns: [] });
    const timed = new TimedFake(fake);
    // The fake's http.Server is private; a second 'request' listener only observes.
    const server = (fake as unknown as { server?: unknown }).server;
    if (!(server instanceof http.Server)) throw new Error('bench: test/support/fake-ollama.ts no longer exposes its http.Server');
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      const t: Timing = { method: req.method ?? 'GET', path: (req.url ?? '/').split('?')[0] ?? '/', tHead: performance.now() };
      timed.timings.push(t);
      req.once('end', () => {
        t.tBody = performance.now();
        if (t.path === '/api/chat') timed.onChat?.();
      });
      res.once('finish', () => (t.tFinish = performance.now()));
      res.once('close', () => (t.tClose = performance.now()));
    });
    return timed;
  }

  get url(): string {
    return this.fake.url;
  }

  /** Starts a new script; returns the index of the first request it will see. */
  play(script: FakeScript): number {
    this.fake.setScript(script);
    return this.timings.length;
  }

  /** Chat requests since `from`, with their recorded request (bytes, body). */
  chats(from: number): Array<Timing & { bytes: number; body: Record<string, unknown> | undefined }> {
    const out = [];
    for (let i = from; i < this.timings.length; i++) {
      const t = this.timings[i];
      const rec = this.fake.requests[i];
      if (!t || t.path !== '/api/chat') continue;
      out.push({ ...t, bytes: rec?.bytes ?? 0, body: rec?.body });
    }
    return out;
  }

  /** Drops the parsed request bodies kept so far (a long loop keeps megabytes of them). */
  forgetBodies(): void {
    for (const r of this.fake.requests) r.body = undefined;
  }

  since(from: number): Timing[] {
    return this.timings.slice(from);
  }

  close(): Promise<void> {
    return this.fake.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Running the CLI

interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  tStart: number;
  tExit: number;
  wallMs: number;
  /** Peak RSS in KB when run under a time wrapper. */
  maxRssKb?: number;
}

const children = new Set<ChildProcess>();

interface RunOpts {
  env: NodeJS.ProcessEnv;
  cwd: string;
  timeoutMs?: number;
  measureRss?: boolean;
  onSpawn?: (child: ChildProcess, tStart: number) => void;
}

let rssFile = '';
const TIME_BIN = ['/usr/bin/time', '/bin/time'].find((p) => fs.existsSync(p));

function runNavi(args: string[], o: RunOpts): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    let cmd = process.execPath;
    let argv = [MAIN, ...args];
    const env = { ...o.env };
    if (opts.nodeOptions !== undefined) env.NODE_OPTIONS = opts.nodeOptions;
    if (o.measureRss) {
      fs.rmSync(rssFile, { force: true });
      if (TIME_BIN) {
        argv = ['-f', '%M', '-o', rssFile, process.execPath, ...argv];
        cmd = TIME_BIN;
      } else {
        // No GNU time: a preload writes process.resourceUsage().maxRSS (KB) at exit.
        env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} --require ${path.join(path.dirname(rssFile), 'peak-rss.cjs')}`.trim();
        env.BENCH_RSS_FILE = rssFile;
      }
    }
    const tStart = performance.now();
    const child = spawn(cmd, argv, { cwd: o.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 60_000);
    o.onSpawn?.(child, tStart);
    child.on('error', (err) => {
      clearTimeout(timer);
      children.delete(child);
      reject(err);
    });
    child.on('exit', (code, signal) => {
      const tExit = performance.now();
      clearTimeout(timer);
      children.delete(child);
      // stdout may still be draining: wait for the pipes to close.
      const done = (): void => {
        let maxRssKb: number | undefined;
        if (o.measureRss) {
          const text = fs.existsSync(rssFile) ? fs.readFileSync(rssFile, 'utf8').trim().split('\n').pop() : '';
          const n = Number(text);
          if (Number.isFinite(n) && n > 0) maxRssKb = n;
        }
        resolve({ code, signal, stdout, stderr, tStart, tExit, wallMs: tExit - tStart, ...(maxRssKb ? { maxRssKb } : {}) });
      };
      if (child.stdout?.readableEnded !== false && child.stderr?.readableEnded !== false) done();
      else child.once('close', done);
    });
  });
}

function resultOf(r: RunResult): { status?: string; result?: string; session_id?: string; errors?: string[] } {
  const last = r.stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(last) as { status?: string };
  } catch {
    return {};
  }
}

function describeFailure(r: RunResult): string {
  const res = resultOf(r);
  const why = res.errors?.[0] ?? r.stderr.trim().split('\n').slice(-2).join(' ') ?? '';
  return `exit ${r.code ?? r.signal}: ${why}`.slice(0, 160);
}

// ---------------------------------------------------------------------------------------------
// Workspace

interface Backend {
  name: 'PGlite' | 'PostgreSQL';
  env: NodeJS.ProcessEnv;
  /** For seeding: openStore options. */
  store: { url?: string; dataDir: string };
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'navi-bench-'));
rssFile = path.join(tmp, 'rss.txt');
fs.writeFileSync(
  path.join(tmp, 'peak-rss.cjs'),
  "process.on('exit', () => { try { require('fs').writeFileSync(process.env.BENCH_RSS_FILE, String(process.resourceUsage().maxRSS)); } catch {} });\n",
);
const home = path.join(tmp, 'home');
const work = path.join(tmp, 'work');
fs.mkdirSync(home, { recursive: true });
fs.mkdirSync(path.join(work, 'src'), { recursive: true });
fs.writeFileSync(path.join(work, 'README.md'), '# demo\n');
fs.writeFileSync(path.join(work, 'package.json'), '{"name":"demo"}\n');
fs.writeFileSync(path.join(work, 'src', 'index.ts'), 'export const x = 1;\n');

function childEnv(fakeUrl: string, extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  // A clean environment: nothing of the caller's (DATABASE_URL, NODE_OPTIONS, a user config)
  // leaks into the measured process.
  return {
    PATH: process.env.PATH,
    HOME: home,
    LANG: 'C.UTF-8',
    CI: '1',
    NO_COLOR: '1',
    OLLAMA_HOST: fakeUrl,
    ...extra,
  };
}

let pgDrop: (() => Promise<void>) | null = null;

async function cleanup(): Promise<void> {
  for (const c of children) c.kill('SIGKILL');
  if (pgDrop) await pgDrop().catch(() => undefined);
  pgDrop = null;
  if (!opts.keep) fs.rmSync(tmp, { recursive: true, force: true });
}

process.once('SIGINT', () => {
  void cleanup().finally(() => process.exit(130));
});

/** Creates `navi_bench_<pid>`; null when no PostgreSQL answers. */
async function setupPostgres(): Promise<{ url: string } | { skipped: string }> {
  let postgres: typeof PostgresFactory;
  try {
    ({ default: postgres } = await import('postgres'));
  } catch (err) {
    return { skipped: `postgres.js not installed (${String(err)})` };
  }
  const dbName = `navi_bench_${process.pid}`;
  const admin = postgres(opts.pgAdmin, { max: 1, connect_timeout: 3, onnotice: () => undefined });
  try {
    await admin`select 1`;
    await admin.unsafe(`drop database if exists "${dbName}"`);
    await admin.unsafe(`create database "${dbName}"`);
  } catch (err) {
    await admin.end({ timeout: 0 }).catch(() => undefined);
    return { skipped: `no PostgreSQL at ${redact(opts.pgAdmin)} (${err instanceof Error ? err.message : String(err)})` };
  }
  pgDrop = async () => {
    try {
      await admin.unsafe(`drop database if exists "${dbName}" with (force)`);
    } finally {
      await admin.end({ timeout: 1 });
    }
  };
  const url = new URL(opts.pgAdmin);
  url.pathname = `/${dbName}`;
  return { url: url.toString() };
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

// ---------------------------------------------------------------------------------------------
// Scripts

const ONE_TOOL_TURN: FakeScript = {
  turns: [
    { tool_calls: [{ name: 'list_dir', arguments: { path: '.' } }] },
    { content: 'The directory holds README.md, package.json and src/.' },
  ],
  on_exhausted: 'error',
};
const ONE_SHOT_PROMPT = 'List the files in this directory.';

function toolLoopScript(turns: number): FakeScript {
  const tool: FakeTurn = { tool_calls: [{ name: 'todo', arguments: { action: 'list' } }] };
  return {
    models: [{ name: MODEL, context_length: BIG_CTX }],
    turns: [...Array.from({ length: turns }, () => tool), { content: 'Audit finished.' }],
    on_exhausted: 'error',
  };
}

const PREFILL_STALL: FakeScript = { turns: [{ first_chunk_delay_ms: 120_000, content: 'too late' }], on_exhausted: 'error' };

/** `n` messages of plausible history: a prompt, (n-2)/2 tool round trips, an answer. */
function history(n: number): Array<{ role: 'user' | 'assistant' | 'tool'; content: string; tool_calls?: unknown[]; tool_name?: string }> {
  const out: Array<{ role: 'user' | 'assistant' | 'tool'; content: string; tool_calls?: unknown[]; tool_name?: string }> = [
    { role: 'user', content: 'Audit every module under src/ for unchecked errors and list what you find.' },
  ];
  const pairs = Math.max(0, Math.floor((n - 2) / 2));
  for (let i = 0; i < pairs; i++) {
    out.push({ role: 'assistant', content: '', tool_calls: [{ id: `call_${i}`, name: 'read_file', arguments: { path: `src/module_${i}.ts` } }] });
    const body = Array.from({ length: 6 }, (_, j) => `${j + 1}\texport function f${i}_${j}(input: string): number { return input.length * ${j}; }`).join('\n');
    out.push({ role: 'tool', content: body, tool_name: 'read_file' });
  }
  while (out.length < n) out.push({ role: 'assistant', content: `Checked ${pairs} modules; nothing unchecked so far.` });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Figures

function figureStartup(): void {
  const env = { PATH: process.env.PATH, HOME: home };
  const runOnce = (args: string[]): number => {
    const t = performance.now();
    const r = spawnSync(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'ignore'] });
    const dt = performance.now() - t;
    if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}`);
    return dt;
  };
  const version = spawnSync(process.execPath, [MAIN, '--version'], { env, encoding: 'utf8' }).stdout.trim();
  const expected = (JSON.parse(fs.readFileSync(path.join(opts.root, 'package.json'), 'utf8')) as { version: string }).version;
  if (version !== expected) {
    row('navi --version vs node -e \'\'', '≤ 1.20×', `--version printed '${version}', expected '${expected}'`, 'error');
    return;
  }
  // Two unmeasured runs each: the OS file cache, not anything of navi's, gets warm.
  for (let i = 0; i < 2; i++) {
    runOnce(['-e', '']);
    runOnce([MAIN, '--version']);
  }
  const node: number[] = [];
  const navi: number[] = [];
  for (let i = 0; i < opts.startupRuns; i++) {
    // Interleaved, alternating which goes first, so drift in machine load hits both alike.
    if (i % 2 === 0) {
      node.push(runOnce(['-e', '']));
      navi.push(runOnce([MAIN, '--version']));
    } else {
      navi.push(runOnce([MAIN, '--version']));
      node.push(runOnce(['-e', '']));
    }
  }
  const ratio = median(navi) / median(node);
  row(
    "startup: navi --version vs node -e ''",
    '≤ 1.20×',
    `${ratio.toFixed(2)}× (${ms(median(navi), 1)} vs ${ms(median(node), 1)}, median of ${opts.startupRuns})`,
    check(ratio <= 1.2),
    { navi, node, ratio },
  );
}

interface OneShotSample {
  wallMs: number;
  startToFirstRequest: number;
  showCost: number;
  gap1: number;
  tail: number;
  firstRequestBytes: number;
  body: Record<string, unknown> | undefined;
}

async function oneShot(fake: TimedFake, backend: Backend, measureRss = false): Promise<{ sample?: OneShotSample; rssKb?: number; error?: string }> {
  const from = fake.play(ONE_TOOL_TURN);
  const r = await runNavi(['run', '-o', 'json', '--quiet', ONE_SHOT_PROMPT], { env: backend.env, cwd: work, measureRss });
  const res = resultOf(r);
  const reqs = fake.since(from);
  const chats = fake.chats(from);
  if (r.code !== 0 || res.status !== 'success' || chats.length !== 2) {
    return { error: `${describeFailure(r)} (${chats.length} chat requests)` };
  }
  const toolResult = JSON.stringify(chats[1]?.body?.messages ?? '');
  if (!toolResult.includes('README.md')) return { error: 'the second request does not carry the list_dir result' };
  const first = reqs[0];
  const [c1, c2] = chats as [(typeof chats)[number], (typeof chats)[number]];
  const sample: OneShotSample = {
    wallMs: r.wallMs,
    startToFirstRequest: (first?.tHead ?? Number.NaN) - r.tStart,
    showCost: first?.path === '/api/show' ? c1.tHead - first.tHead : 0,
    gap1: (c2.tBody ?? Number.NaN) - (c1.tFinish ?? Number.NaN),
    tail: r.tExit - (c2.tFinish ?? Number.NaN),
    firstRequestBytes: c1.bytes,
    body: c1.body,
  };
  return { sample, ...(r.maxRssKb ? { rssKb: r.maxRssKb } : {}) };
}

async function figureOneShot(fake: TimedFake, backend: Backend, target: number): Promise<OneShotSample | null> {
  const label = `one-shot run, 1 tool turn, ${backend.name}`;
  // Unmeasured first run: creates the PGlite directory / migrates the new database.
  const warm = await oneShot(fake, backend);
  if (warm.error) {
    row(label, `≤ ${target} ms`, `error: ${warm.error}`, 'error');
    return null;
  }
  const firstUse = warm.sample?.wallMs ?? Number.NaN;
  const samples: OneShotSample[] = [];
  for (let i = 0; i < opts.runs; i++) {
    const s = await oneShot(fake, backend);
    if (s.error || !s.sample) {
      row(label, `≤ ${target} ms`, `error: ${s.error}`, 'error');
      return null;
    }
    samples.push(s.sample);
  }
  const walls = samples.map((s) => s.wallMs);
  const m = median(walls);
  row(
    label + (backend.name === 'PGlite' ? ' (existing data dir)' : ''),
    `≤ ${target} ms`,
    `${ms(m)} median of ${opts.runs} (min ${ms(Math.min(...walls))}, max ${ms(Math.max(...walls))})`,
    check(m <= target),
    { walls },
  );
  const part = (f: (s: OneShotSample) => number): number => median(samples.map(f));
  row(
    `  ${backend.name} one-shot breakdown (median)`,
    'info',
    `spawn→1st HTTP ${ms(part((s) => s.startToFirstRequest))}; /api/show sent→chat 1 sent ${ms(part((s) => s.showCost), 1)}; ` +
      `chat 1 done→chat 2 received ${ms(part((s) => s.gap1))}; chat 2 done→exit ${ms(part((s) => s.tail))}`,
    'info',
    {
      startToFirstRequest: samples.map((s) => s.startToFirstRequest),
      showCost: samples.map((s) => s.showCost),
      gap1: samples.map((s) => s.gap1),
      tail: samples.map((s) => s.tail),
    },
  );
  row(
    `  ${backend.name} first run ever (${backend.name === 'PGlite' ? 'new data dir: initdb + migrations' : 'new database: migrations'})`,
    'info',
    ms(firstUse),
    'info',
  );
  return samples[samples.length - 1] ?? null;
}

function figureFirstRequest(sample: OneShotSample | null): void {
  if (!sample) {
    row('first request size, default profile', '≤ 10,000 B', 'n/a (one-shot run failed)', 'error');
    return;
  }
  const body = sample.body ?? {};
  const messages = Array.isArray(body.messages) ? (body.messages as Array<{ role?: string; content?: string }>) : [];
  const system = messages.find((m) => m.role === 'system')?.content ?? '';
  const tools = Array.isArray(body.tools) ? (body.tools as Array<{ function?: { name?: string } }>) : [];
  const toolBytes = Buffer.byteLength(JSON.stringify(body.tools ?? []));
  row(
    'first request size, default profile',
    '≤ 10,000 B',
    `${sample.firstRequestBytes.toLocaleString('en')} B (system prompt ${Buffer.byteLength(system).toLocaleString('en')} B, ` +
      `${tools.length} tool schemas ${toolBytes.toLocaleString('en')} B)`,
    check(sample.firstRequestBytes <= 10_000),
    { bytes: sample.firstRequestBytes, systemBytes: Buffer.byteLength(system), toolBytes, tools: tools.map((t) => t.function?.name) },
  );
}

async function figureRss(fake: TimedFake, backend: Backend, target: number | null): Promise<void> {
  const label = `peak RSS, one-shot run, ${backend.name}`;
  const kbs: number[] = [];
  // What a returning user has: the database exists and is migrated (with --only rss, nothing
  // else has created it yet; creating it is a one-time cost reported by the one-shot figure).
  const warm = await oneShot(fake, backend);
  if (warm.error) {
    row(label, target ? `≤ ${target} MB` : 'info', `error: ${warm.error}`, 'error');
    return;
  }
  for (let i = 0; i < 3; i++) {
    const s = await oneShot(fake, backend, true);
    if (s.error || !s.rssKb) {
      row(label, target ? `≤ ${target} MB` : 'info', `error: ${s.error ?? 'no RSS figure'}`, 'error');
      return;
    }
    kbs.push(s.rssKb);
  }
  const peak = Math.max(...kbs);
  row(
    label,
    target ? `≤ ${target} MB` : 'info',
    `${mb(peak)} (max of 3; ${kbs.map((k) => (k / 1024).toFixed(0)).join(', ')} MB)`,
    target ? check(peak <= target * 1024) : 'info',
    { kb: kbs },
  );
}

interface StoreApi {
  sessions: { create(s: Record<string, unknown>): Promise<void> };
  messages: { append(id: string, m: unknown): Promise<void> };
  close(): Promise<void>;
}

async function seedHistories(backend: Backend, sizes: number[]): Promise<Map<number, string>> {
  const mod = (await import(pathToFileURL(path.join(opts.root, 'dist', 'store', 'open.js')).href)) as {
    openStore: (o: { url?: string; dataDir: string }) => Promise<StoreApi>;
  };
  const store = await mod.openStore(backend.store);
  const ids = new Map<number, string>();
  try {
    for (const n of sizes) {
      const id = randomUUID();
      await store.sessions.create({ id, kind: 'chat', profile: 'default', cwd: work, parentId: null, title: `bench: ${n} messages`, model: MODEL });
      for (const m of history(n)) await store.messages.append(id, m);
      ids.set(n, id);
    }
  } finally {
    await store.close();
  }
  return ids;
}

const GAP_TURNS = 30;

async function figureGaps(fake: TimedFake, backend: Backend, sizes: number[]): Promise<void> {
  let ids: Map<number, string>;
  try {
    ids = await seedHistories(backend, sizes);
  } catch (err) {
    row(`harness gap per iteration, ${backend.name}`, '≤ 3 ms', `error seeding history: ${String(err)}`.slice(0, 200), 'error');
    return;
  }
  const medians: number[] = [];
  for (const n of sizes) {
    const label = `harness gap per tool iteration, ${backend.name}, ${n} msgs`;
    const from = fake.play(toolLoopScript(GAP_TURNS));
    const r = await runNavi(['run', '-o', 'json', '--quiet', '--session', ids.get(n) ?? '', 'Continue the audit.'], {
      env: { ...backend.env, OLLAMA_NUM_CTX: String(BIG_CTX) },
      cwd: work,
    });
    const chats = fake.chats(from);
    if (r.code !== 0 || resultOf(r).status !== 'success' || chats.length !== GAP_TURNS + 1) {
      row(label, '≤ 3 ms', `error: ${describeFailure(r)} (${chats.length} chat requests)`, 'error');
      continue;
    }
    const gaps: number[] = [];
    for (let k = 0; k + 1 < chats.length; k++) gaps.push((chats[k + 1]?.tBody ?? Number.NaN) - (chats[k]?.tFinish ?? Number.NaN));
    if (n === sizes[sizes.length - 1]) prefixCheck(backend, chats.map((c) => c.body));
    fake.forgetBodies();
    const m = median(gaps);
    medians.push(m);
    const bytes = chats.map((c) => c.bytes);
    row(
      label,
      '≤ 3 ms median',
      `median ${ms(m, 2)}, p90 ${ms(p90(gaps), 2)} over ${gaps.length} iterations (request ${Math.round((bytes[0] ?? 0) / 1024)}→${Math.round((bytes[bytes.length - 1] ?? 0) / 1024)} KB)`,
      check(m <= 3),
      { gaps, bytes },
    );
  }
  if (medians.length === sizes.length) {
    const growth = (medians[medians.length - 1] ?? 0) - (medians[0] ?? 0);
    row(
      `  ${backend.name} gap growth ${sizes[0]}→${sizes[sizes.length - 1]} msgs`,
      'flat (≤ +1 ms)',
      `${growth >= 0 ? '+' : ''}${ms(growth, 2)}`,
      check(growth <= 1),
      { medians },
    );
  }
}

/**
 * SPEC §8 prefix stability: request N+1 starts with request N's messages but its last one (which
 * carried the per-call reminders: appended to a tool result, or a trailing user message);
 * model, tools and options are byte-identical. Also reports how much of request N survives as
 * N+1's prefix. (What the model server renders is the "rendered-prompt reuse" row.)
 */
function prefixCheck(backend: Backend, bodies: Array<Record<string, unknown> | undefined>): void {
  let broken = '';
  let minReuse = 1;
  for (let k = 0; k + 1 < bodies.length && !broken; k++) {
    const { messages: ma, ...restA } = (bodies[k] ?? {}) as { messages?: unknown[] };
    const { messages: mb, ...restB } = (bodies[k + 1] ?? {}) as { messages?: unknown[] };
    if (JSON.stringify(restA) !== JSON.stringify(restB)) {
      broken = `request ${k + 2} changes model/tools/options`;
      break;
    }
    if (!Array.isArray(ma) || !Array.isArray(mb)) {
      broken = `request ${k + 1} has no messages`;
      break;
    }
    let i = 0;
    while (i < ma.length && i < mb.length && JSON.stringify(ma[i]) === JSON.stringify(mb[i])) i++;
    const tail = ma.slice(i) as Array<{ role?: string }>;
    const bytes = (xs: unknown[]): number => xs.reduce<number>((n, m) => n + JSON.stringify(m).length, 0);
    minReuse = Math.min(minReuse, bytes(ma.slice(0, i)) / Math.max(1, bytes(ma)));
    if (tail.length > 1 || tail.some((m) => m.role !== 'tool' && m.role !== 'user')) {
      broken = `request ${k + 2} rewrites message ${i} of ${ma.length} (${tail.map((m) => m.role).join(', ')} dropped/changed)`;
    }
  }
  row(
    `stable request prefix, ${bodies.length} consecutive requests (${backend.name})`,
    'N+1 = N − last + appended',
    broken || `holds; ≥ ${(minReuse * 100).toFixed(1)}% of each request reused as the next one's prefix`,
    check(!broken),
  );
}

/** The runs whose requests the rendered-prompt reuse figure measures. */
interface ReuseRun {
  name: string;
  script: FakeScript;
  prompt: string;
  /** Continue a seeded session of this many messages (as the gap figure does). */
  session?: number;
}

const PLAN_ANALYSIS = [
  'TASK: Summarise README.md',
  'GOAL: a one-line summary',
  'UNKNOWNS: none',
  'RESOURCES: README.md',
  'KNOWLEDGE RULES: none',
  'COMPLEXITY: simple',
  'SUBTASKS: read, summarise',
  'COMMITMENTS: none',
].join('\n');

/**
 * A representative set: the gap figure's run (30 identical todo calls continuing a stored session:
 * iteration budget, goal anchors and the anti-stall warning all ride in the last message), a fresh
 * run with thinking and varied tools (qwen3's template drops thinking before the last user
 * message), the plan tool (its own calls, then the plan injected as an assistant message) and a
 * sub-agent (spawn_agent; its own conversation). Model latency is zero; only the bodies matter.
 */
function reuseRuns(): ReuseRun[] {
  const think = (thinking: string, name: string, args: Record<string, unknown>): FakeTurn => ({ thinking, tool_calls: [{ name, arguments: args }] });
  return [
    { name: 'tool loop (gap run)', script: toolLoopScript(GAP_TURNS), prompt: 'Continue the audit.', session: 100 },
    {
      name: 'thinking + varied tools',
      prompt: 'Look around this project and note what it holds.',
      script: {
        models: [{ name: MODEL, context_length: BIG_CTX }],
        turns: [
          think('Start with the layout.', 'list_dir', { path: '.' }),
          think('Read the readme.', 'read_file', { path: 'README.md' }),
          think('Any sources?', 'search_files', { pattern: 'demo' }),
          think('Track it.', 'todo', { action: 'add', text: 'summarise the project' }),
          think('Note it.', 'scratchpad', { action: 'write', content: 'README: a demo' }),
          ...Array.from({ length: 10 }, (_, i) => think(`Check the list again (${i + 1}).`, 'todo', { action: 'list' })),
          { thinking: 'Enough.', content: 'A demo project: README.md and an empty src/.' },
        ],
        on_exhausted: 'error',
      },
    },
    {
      name: 'plan tool',
      prompt: 'Summarise README.md: plan it first.',
      script: {
        models: [{ name: MODEL, context_length: BIG_CTX }],
        turns: [
          think('Plan first.', 'plan', {}),
          { content: PLAN_ANALYSIS },
          { content: '1. Read README.md — TOOL: read_file\n2. Summarise — SELF' },
          think('Step 1.', 'read_file', { path: 'README.md' }),
          think('Mark it.', 'todo', { action: 'list' }),
          { thinking: 'Step 2.', content: 'README.md is a one-line demo heading.' },
        ],
        on_exhausted: 'error',
      },
    },
    {
      name: 'sub-agent',
      prompt: 'Have a helper look at README.md, then wrap up.',
      script: {
        models: [{ name: MODEL, context_length: BIG_CTX }],
        turns: [
          think('Delegate.', 'spawn_agent', { task: 'Look at README.md and report', profile_id: 'researcher' }),
          // The sub-agent: two calls of its own, then its answer.
          think('Sub: list.', 'list_dir', { path: '.' }),
          think('Sub: read.', 'read_file', { path: 'README.md' }),
          { content: 'README.md holds a demo heading.' },
          think('Wrap up.', 'todo', { action: 'list' }),
          { content: 'All checked: a demo heading.' },
        ],
        on_exhausted: 'error',
      },
    },
  ];
}

/**
 * SPEC §8/§12/§13: how much of the prompt a real Ollama rendered for request N the next request
 * of the same conversation reuses from the KV cache — render(N) up to its last message (which
 * carries the per-call reminders) against render(N+1), with the qwen3 template of
 * test/support/render-prompt.ts. Conversations are told apart by their first user message (the
 * main agent, a sub-agent, planning and summariser calls); a compression makes the summary the
 * first user message, so pairs across one are never compared (the bench's large num_ctx does not
 * compress anyway). Target: the minimum over all consecutive pairs is 100%.
 */
async function figureReuse(fake: TimedFake, backend: Backend): Promise<void> {
  const label = `rendered-prompt reuse, call to call (${backend.name})`;
  const target = '100% between compressions';
  const runs = reuseRuns();
  let ids: Map<number, string>;
  try {
    ids = await seedHistories(backend, [...new Set(runs.flatMap((r) => (r.session === undefined ? [] : [r.session])))]);
  } catch (err) {
    row(label, target, `error seeding history: ${String(err)}`.slice(0, 200), 'error');
    return;
  }
  const kept: number[] = [];
  const perRun: string[] = [];
  let worst: { value: number; where: string } | null = null;
  let conversations = 0;
  for (const run of runs) {
    const from = fake.play(run.script);
    const session = run.session === undefined ? [] : ['--session', ids.get(run.session) ?? ''];
    const r = await runNavi(['run', '-o', 'json', '--quiet', ...session, run.prompt], {
      env: { ...backend.env, OLLAMA_NUM_CTX: String(BIG_CTX) },
      cwd: work,
    });
    const bodies = fake.chats(from).map((c) => c.body ?? {});
    fake.forgetBodies();
    if (r.code !== 0 || resultOf(r).status !== 'success' || bodies.length < 2) {
      row(label, target, `error in run "${run.name}": ${describeFailure(r)} (${bodies.length} chat requests)`, 'error');
      return;
    }
    const groups = new Map<string, Array<Record<string, unknown>>>();
    for (const body of bodies) {
      const key = firstUserMessage(body);
      groups.set(key, [...(groups.get(key) ?? []), body]);
    }
    const values: number[] = [];
    for (const [first, group] of groups) {
      if (group.length > 1) conversations++;
      for (let k = 0; k + 1 < group.length; k++) {
        const value = prefixKept(group[k] ?? {}, group[k + 1] ?? {});
        values.push(value);
        if (worst === null || value < worst.value) {
          const why = prefixBreaks([group[k] ?? {}, group[k + 1] ?? {}])[0] ?? '';
          worst = { value, where: `${run.name}, conversation "${first.slice(0, 40)}", ${why.slice(0, 200)}` };
        }
      }
    }
    kept.push(...values);
    perRun.push(`${run.name}: ${bodies.length} requests, min ${percent(Math.min(...values))}`);
  }
  if (kept.length === 0) {
    row(label, target, 'error: no two requests of one conversation', 'error');
    return;
  }
  const min = Math.min(...kept);
  const mean = kept.reduce((a, b) => a + b, 0) / kept.length;
  row(
    label,
    target,
    `min ${percent(min)}, mean ${percent(mean)} over ${kept.length} consecutive pairs in ${conversations} conversations` +
      (min < 1 && worst ? `; worst: ${worst.where}` : ''),
    check(min === 1),
    { kept, min, mean },
  );
  row(`  ${backend.name} reuse by run`, 'info', perRun.join('; '), 'info');
}

/** The content of a request's first user message ('' when none): what tells conversations apart. */
function firstUserMessage(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages) ? (body.messages as Array<{ role?: unknown; content?: unknown }>) : [];
  const user = messages.find((m) => m.role === 'user');
  return typeof user?.content === 'string' ? user.content : '';
}

/** A share as a percentage that never rounds up to 100% (n/a when there is nothing). */
function percent(x: number): string {
  if (!Number.isFinite(x)) return 'n/a';
  return x === 1 ? '100%' : `${(Math.floor(x * 1000) / 10).toFixed(1)}%`;
}

async function figureStop(fake: TimedFake, backend: Backend): Promise<void> {
  const label = `stop latency, SIGINT during prefill, ${backend.name}`;
  const lat: number[] = [];
  for (let i = 0; i < 3; i++) {
    const from = fake.play(PREFILL_STALL);
    let sentAt = Number.NaN;
    const r = await runNavi(['run', '-o', 'json', '--quiet', ONE_SHOT_PROMPT], {
      env: backend.env,
      cwd: work,
      timeoutMs: 30_000,
      onSpawn: (child) => {
        const poll = setInterval(() => {
          const chat = fake.chats(from)[0];
          if (chat?.tBody === undefined) return;
          // In prefill: the request has been sent and the model is "silent".
          if (performance.now() - chat.tBody < 200) return;
          clearInterval(poll);
          sentAt = performance.now();
          child.kill('SIGINT');
        }, 5);
        child.once('exit', () => clearInterval(poll));
      },
    });
    if (r.code !== 130 || !Number.isFinite(sentAt)) {
      row(label, '≤ 1,000 ms', `error: ${describeFailure(r)} (expected exit 130 after SIGINT)`, 'error');
      return;
    }
    lat.push(r.tExit - sentAt);
  }
  row(label, '≤ 1,000 ms', `max ${ms(Math.max(...lat))} of 3 (median ${ms(median(lat))}), exit 130`, check(Math.max(...lat) <= 1000), { ms: lat });
}

function vmRssKb(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const m = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** SPEC §12: RSS growth over a 1000-iteration loop (VmRSS when request 50 vs 1000 arrives). */
async function figureRssGrowth(fake: TimedFake, backend: Backend, iterations: number): Promise<void> {
  const label = `RSS growth over a ${iterations}-iteration loop, ${backend.name}`;
  if (!fs.existsSync('/proc/self/status')) {
    row(label, '≤ 50 MB', 'skipped: no /proc', 'skip');
    return;
  }
  const script = toolLoopScript(iterations);
  const from = fake.play(script);
  let pid: number | undefined;
  const marks = new Map<number, number>();
  const onRequest = (): void => {
    const n = fake.chats(from).length;
    if (n === 50 || n === iterations) marks.set(n, vmRssKb(pid));
  };
  fake.onChat = onRequest;
  const r = await runNavi(['run', '-o', 'json', '--quiet', '--max-iterations', String(iterations + 1), 'Walk the todo list many times.'], {
    env: { ...backend.env, OLLAMA_NUM_CTX: String(BIG_CTX * 4) },
    cwd: work,
    timeoutMs: 150_000,
    onSpawn: (child) => (pid = child.pid),
  });
  fake.onChat = undefined;
  const chats = fake.chats(from);
  fake.forgetBodies();
  const a = marks.get(50);
  const b = marks.get(iterations);
  if (r.code !== 0 || chats.length !== iterations + 1 || a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b)) {
    row(label, '≤ 50 MB', `error: ${describeFailure(r)} (${chats.length} chat requests)`, 'error');
    return;
  }
  const gaps: number[] = [];
  for (let k = 0; k + 1 < chats.length; k++) gaps.push((chats[k + 1]?.tBody ?? Number.NaN) - (chats[k]?.tFinish ?? Number.NaN));
  const late = gaps.slice(-100);
  row(
    label,
    '≤ 50 MB',
    `${mb(b - a)} (${mb(a)} at iteration 50 → ${mb(b)} at ${iterations}); gap at the end: median ${ms(median(late), 2)}, ` +
      `request ${Math.round((chats[chats.length - 1]?.bytes ?? 0) / 1024)} KB; run ${ms(r.wallMs)}`,
    check(b - a <= 50 * 1024),
    { rssAt50: a, rssAtEnd: b, lateGaps: late },
  );
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} not found: run npm run build (npm run bench does)`);
  const started = performance.now();
  const envLine =
    `navi bench · node ${process.version} · ${os.cpus().length} CPU (${os.cpus()[0]?.model.trim() ?? '?'}) · ` +
    `load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} · ${new Date().toISOString()} · ${path.relative(process.cwd(), MAIN) || MAIN}`;
  const busy = os.loadavg()[0] ?? 0;
  const busyNote =
    busy > os.cpus().length * 0.5
      ? `\nWARNING: the machine is busy (1-min load ${busy.toFixed(1)} on ${os.cpus().length} CPUs): timings are inflated; re-run on an idle machine.`
      : '';
  if (!opts.json) process.stderr.write(`${envLine}${busyNote}\n(progress on stderr; the table follows on stdout)\n`);

  if (want('startup')) figureStartup();

  const fake = await TimedFake.start();
  const pglite: Backend = {
    name: 'PGlite',
    env: childEnv(fake.url, { NAVI_DATA_DIR: path.join(tmp, 'pglite', 'pgdata') }),
    store: { dataDir: path.join(tmp, 'pglite', 'pgdata') },
  };
  const pg = await setupPostgres();
  const postgresBackend: Backend | null =
    'url' in pg ? { name: 'PostgreSQL', env: childEnv(fake.url, { DATABASE_URL: pg.url }), store: { url: pg.url, dataDir: path.join(tmp, 'unused') } } : null;
  const skipped = 'skipped' in pg ? `skipped: ${pg.skipped}` : '';

  try {
    // 2. One-shot wall time (4. first request size comes from the same runs).
    if (want('oneshot')) {
      const pgliteSample = await figureOneShot(fake, pglite, 500);
      let pgSample: OneShotSample | null = null;
      if (postgresBackend) pgSample = await figureOneShot(fake, postgresBackend, 300);
      else row('one-shot run, 1 tool turn, PostgreSQL', '≤ 300 ms', skipped, 'skip');
      figureFirstRequest(pgSample ?? pgliteSample);
    }

    // 3. Harness gap per iteration.
    if (want('gap')) {
      const sizes = [10, 100, 1000];
      await figureGaps(fake, pglite, sizes);
      if (postgresBackend) await figureGaps(fake, postgresBackend, sizes);
      else row('harness gap per tool iteration, PostgreSQL', '≤ 3 ms median', skipped, 'skip');
    }

    // SPEC §12: rendered-prompt reuse from call to call (the prompt depends on navi, not on the
    // database: one backend is enough).
    if (want('reuse')) await figureReuse(fake, pglite);

    // 5. Peak RSS.
    if (want('rss')) {
      if (postgresBackend) await figureRss(fake, postgresBackend, 150);
      else row('peak RSS, one-shot run, PostgreSQL', '≤ 150 MB', skipped, 'skip');
      await figureRss(fake, pglite, null);
    }

    // SPEC §12 also: RSS growth over a long loop (PostgreSQL, else PGlite).
    if (want('growth')) await figureRssGrowth(fake, postgresBackend ?? pglite, 1000);

    // 6. Stop latency.
    if (want('stop')) {
      await figureStop(fake, pglite);
      if (postgresBackend) await figureStop(fake, postgresBackend);
      else row('stop latency, SIGINT during prefill, PostgreSQL', '≤ 1,000 ms', skipped, 'skip');
    }
  } finally {
    await fake.close();
    await cleanup();
  }

  const total = (performance.now() - started) / 1000;
  if (opts.json) {
    process.stdout.write(`${JSON.stringify({ env: envLine, load: os.loadavg(), seconds: total, rows }, null, 2)}\n`);
  } else {
    printTable(envLine + busyNote);
    const failed = rows.filter((r) => r.verdict === 'FAIL' || r.verdict === 'error').length;
    if (rows.some((r) => r.verdict === 'error')) process.exitCode = 1;
    process.stdout.write(`\n${failed === 0 ? 'all targets met' : `${failed} figure(s) miss their target or failed`} · bench took ${total.toFixed(0)} s${opts.keep ? ` · kept ${tmp}` : ''}\n`);
  }
}

main().catch(async (err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  await cleanup();
  process.exit(1);
});
