/**
 * navi benchmark (SPEC §12, issue 2 "Targets", issue 10 "A bench that holds on any day"):
 * `npm run bench` (builds, then runs this file).
 *
 *   ./node_modules/.bin/tsx bench/run.ts [--json] [--runs N] [--startup-runs N] [--root DIR] [--node PATH]
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
 * The machine's speed varies 3–4× from day to day, so timing targets are ratios to a floor
 * measured in the same run, interleaved (alternating which goes first) so that load hits both
 * alike; the absolute figures are printed as info rows beside them:
 *   - startup: `navi --version` ≤ 1.2× `node -e ''`;
 *   - one-shot run with one tool turn ≤ 1.5× (PostgreSQL) / ≤ 2× (PGlite) the reference agent's;
 *   - harness gap per tool iteration (median, database writes included) ≤ 1.2× the reference
 *     agent's, at 10, 100 and 1000 messages of history, and flat as history grows (navi's median
 *     at 1000 messages ≤ 1.5× its own at 10: no O(n) rebuild per iteration);
 *   - on other Node versions (issue 40, bench/node-versions.ts): a PGlite one-shot run's wall and
 *     peak RSS (medians) on each other Node ≤ 1.3× on the bench's own Node, interleaved.
 * The reference agent (bench/reference-agent.js) is a minimal plain-Node Ollama tool loop run by
 * `node` itself (no tsx): node:http, NDJSON parsing, real tools, the whole request rebuilt with
 * JSON.stringify each iteration, no database (that is navi's budget). It plays the same scripts on
 * the same fake server; for the gap it gets the same history (as a JSON file of wire messages)
 * and its gaps are taken from the same fake-server timestamps as navi's.
 * Other targets are absolute because they do not depend on the machine's speed (bytes, reuse,
 * RSS) or are far from it (stop latency ≤ 1 s).
 *
 * Options:
 *   --json             print the rows (and raw samples) as JSON instead of the table
 *   --runs N           one-shot runs per backend, of navi and of the reference each; rounds of
 *                      the nodes figure (default 10)
 *   --gap-rounds N     gap rounds per backend and history size, each a navi run and a reference
 *                      run of 30 iterations on freshly seeded histories (default 3)
 *   --startup-runs N   `--version` / `node -e ''` pairs (default 30)
 *   --root DIR         package root holding dist/ (default: this repository)
 *   --node PATH        the Node binary that runs navi, the reference agent and `node -e ''` (default:
 *                      the bench's own, process.execPath; CI: `--only startup --node $(.ci/node-bin 24)`)
 *   --other-node PATH  the nodes figure's other Node(s), held to the bench's own Node (not --node's),
 *                      repeatable or comma-separated (default: what `.ci/node-bin 24` prints; a row is
 *                      `skip` with the reason when none runs)
 *   --pg-admin URL     where to create the bench database (default: DATABASE_URL, else
 *                      postgres://postgres@127.0.0.1:5432/postgres)
 *   --keep             keep the temporary directory (its path is printed)
 *   --only LIST        measure only these figures (comma-separated): startup, oneshot (also gives
 *                      the first request size), gap, reuse (rendered-prompt reuse), rss, growth,
 *                      stop, mcp (MCP servers: bench/mcp.ts), sandbox (--sandbox per-command
 *                      overhead: bench/sandbox.ts), queue (the job queue, PostgreSQL:
 *                      bench/queue.ts), serve (navi serve: bench/serve.ts), nodes (PGlite one-shot and
 *                      sessions list on other Node versions: bench/node-versions.ts) — for quick A/B
 *                      work; oneshot and gap run the reference agent too
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
import { figureSandbox } from './sandbox.js';
import { startFakeOllama, type FakeOllama, type FakeScript, type FakeTurn } from '../test/support/fake-ollama.js';
import { prefixBreaks, prefixKept, RENDERERS } from '../test/support/render-prompt.js';
import { prefixRuleBreaks } from '../test/support/prefix-rule.js';
import { figureMcp } from './mcp.js';
import { figureQueue } from './queue.js';
import { figureNodes, nodeVersion, parseOtherNodes, type Measured, type NodesRun } from './node-versions.js';

// ---------------------------------------------------------------------------------------------
// Options and environment

interface Options {
  json: boolean;
  runs: number;
  gapRounds: number;
  startupRuns: number;
  root: string;
  pgAdmin: string;
  keep: boolean;
  only: Set<string> | null;
  nodeOptions: string | undefined;
  /** The Node that runs navi, the reference agent and the `node -e ''` floor. */
  node: string;
  otherNodes: string[] | null;
}

const FIGURES = ['startup', 'oneshot', 'gap', 'reuse', 'rss', 'growth', 'stop', 'mcp', 'sandbox', 'queue', 'serve', 'nodes'];

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
  return {
    json: argv.includes('--json'),
    runs: int('--runs', 10),
    gapRounds: int('--gap-rounds', 3),
    startupRuns: int('--startup-runs', 30),
    root: path.resolve(value('--root') ?? REPO),
    pgAdmin: value('--pg-admin') ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    keep: argv.includes('--keep'),
    only: parseOnly(value('--only')),
    nodeOptions: value('--node-options'),
    node: value('--node') === undefined ? process.execPath : path.resolve(value('--node') ?? ''),
    otherNodes: parseOtherNodes(argv),
  };
}

function parseOnly(raw: string | undefined): Set<string> | null {
  if (raw === undefined) return null;
  const names = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const unknown = names.filter((n) => !FIGURES.includes(n));
  if (names.length === 0 || unknown.length > 0) throw new Error(`--only takes a comma-separated list of ${FIGURES.join(', ')}`);
  return new Set(names);
}

/** This repository (its bench/, .ci/), whatever --root names. */
const REPO = fileURLToPath(new URL('..', import.meta.url));
const opts = parseOptions(process.argv.slice(2));
const want = (figure: string): boolean => opts.only === null || opts.only.has(figure);
const MAIN = path.join(opts.root, 'dist', 'cli', 'main.cjs');
/** The floor of the one-shot and gap figures: plain Node, run as is (never through tsx). */
const REFERENCE = fileURLToPath(new URL('./reference-agent.js', import.meta.url));
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
  /** The Node binary (default: --node, else the bench's own). */
  node?: string;
  onSpawn?: (child: ChildProcess, tStart: number) => void;
}

let rssFile = '';
const TIME_BIN = ['/usr/bin/time', '/bin/time'].find((p) => fs.existsSync(p));

function runNavi(args: string[], o: RunOpts): Promise<RunResult> {
  const env = { ...o.env };
  if (opts.nodeOptions !== undefined) env.NODE_OPTIONS = opts.nodeOptions;
  return runNode([MAIN, ...args], { ...o, env });
}

/** The reference agent (bench/reference-agent.js) with the same environment and directory. */
function runReference(args: string[], o: RunOpts): Promise<RunResult> {
  return runNode([REFERENCE, ...args], o);
}

function runNode(nodeArgs: string[], o: RunOpts): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const node = o.node ?? opts.node;
    let cmd = node;
    let argv = nodeArgs;
    const env = { ...o.env };
    if (o.measureRss) {
      fs.rmSync(rssFile, { force: true });
      if (TIME_BIN) {
        argv = ['-f', '%M', '-o', rssFile, node, ...argv];
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
  /** The Node binary navi runs on (default: --node, else the bench's own). */
  node?: string;
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
    const r = spawnSync(opts.node, args, { env, stdio: ['ignore', 'pipe', 'ignore'] });
    const dt = performance.now() - t;
    if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}`);
    return dt;
  };
  const version = spawnSync(opts.node, [MAIN, '--version'], { env, encoding: 'utf8' }).stdout.trim();
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
  const r = await runNavi(['run', '-o', 'json', '--quiet', ONE_SHOT_PROMPT], { env: backend.env, cwd: work, measureRss, ...(backend.node ? { node: backend.node } : {}) });
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

/** The reference agent's one-shot run on the same script: wall time and the same phases. */
async function referenceOneShot(fake: TimedFake, backend: Backend): Promise<{ sample?: OneShotSample; error?: string }> {
  const from = fake.play(ONE_TOOL_TURN);
  const r = await runReference(['--model', MODEL, ONE_SHOT_PROMPT], { env: backend.env, cwd: work });
  const chats = fake.chats(from);
  const answer = ONE_TOOL_TURN.turns[ONE_TOOL_TURN.turns.length - 1]?.content;
  if (r.code !== 0 || r.stdout.trim() !== answer || chats.length !== 2) {
    return { error: `reference agent: exit ${r.code ?? r.signal}: ${(r.stderr.trim() || r.stdout.trim()).slice(0, 120)} (${chats.length} chat requests)` };
  }
  if (!JSON.stringify(chats[1]?.body?.messages ?? '').includes('README.md')) return { error: 'reference agent: the second request does not carry the list_dir result' };
  const [c1, c2] = chats as [(typeof chats)[number], (typeof chats)[number]];
  return {
    sample: {
      wallMs: r.wallMs,
      startToFirstRequest: c1.tHead - r.tStart,
      showCost: 0,
      gap1: (c2.tBody ?? Number.NaN) - (c1.tFinish ?? Number.NaN),
      tail: r.tExit - (c2.tFinish ?? Number.NaN),
      firstRequestBytes: c1.bytes,
      body: c1.body,
    },
  };
}

/**
 * One-shot wall time as a ratio to the reference agent's (SPEC §12), both run `opts.runs` times,
 * alternating which goes first, so that machine load hits both alike. Absolute figures are info.
 */
async function figureOneShot(fake: TimedFake, backend: Backend, maxRatio: number): Promise<OneShotSample | null> {
  const label = `one-shot run, 1 tool turn, ${backend.name}`;
  const target = `≤ ${maxRatio.toFixed(1)}× reference`;
  // Unmeasured first runs: navi's creates the PGlite directory / migrates the new database; the
  // reference's warms the OS file cache for its script as navi's first run does for the bundle.
  const warm = await oneShot(fake, backend);
  const refWarm = warm.error ? warm : await referenceOneShot(fake, backend);
  if (warm.error || refWarm.error) {
    row(label, target, `error: ${warm.error ?? refWarm.error}`, 'error');
    return null;
  }
  const firstUse = warm.sample?.wallMs ?? Number.NaN;
  const samples: OneShotSample[] = [];
  const refSamples: OneShotSample[] = [];
  for (let i = 0; i < opts.runs; i++) {
    for (const who of i % 2 === 0 ? ['navi', 'reference'] : ['reference', 'navi']) {
      const s = who === 'navi' ? await oneShot(fake, backend) : await referenceOneShot(fake, backend);
      if (s.error || !s.sample) {
        row(label, target, `error: ${s.error}`, 'error');
        return null;
      }
      (who === 'navi' ? samples : refSamples).push(s.sample);
    }
  }
  const walls = samples.map((s) => s.wallMs);
  const refWalls = refSamples.map((s) => s.wallMs);
  const ratio = median(walls) / median(refWalls);
  row(
    label + (backend.name === 'PGlite' ? ' (existing data dir)' : ''),
    target,
    `${ratio.toFixed(2)}× (navi ${ms(median(walls))} vs reference ${ms(median(refWalls))}, medians of ${opts.runs}, interleaved)`,
    check(ratio <= maxRatio),
    { ratio, walls, referenceWalls: refWalls },
  );
  const spread = (xs: number[]): string => `${ms(median(xs))} median (min ${ms(Math.min(...xs))}, max ${ms(Math.max(...xs))})`;
  row(`  ${backend.name} one-shot, absolute`, 'info', `navi ${spread(walls)}; reference agent ${spread(refWalls)}`, 'info');
  const part = (xs: OneShotSample[], f: (s: OneShotSample) => number): number => median(xs.map(f));
  const phases = (xs: OneShotSample[], show: boolean): string =>
    `spawn→1st HTTP ${ms(part(xs, (s) => s.startToFirstRequest))}; ` +
    (show ? `/api/show sent→chat 1 sent ${ms(part(xs, (s) => s.showCost), 1)}; ` : '') +
    `chat 1 done→chat 2 received ${ms(part(xs, (s) => s.gap1))}; chat 2 done→exit ${ms(part(xs, (s) => s.tail))}`;
  row(`  ${backend.name} one-shot breakdown (median)`, 'info', phases(samples, true), 'info', {
    startToFirstRequest: samples.map((s) => s.startToFirstRequest),
    showCost: samples.map((s) => s.showCost),
    gap1: samples.map((s) => s.gap1),
    tail: samples.map((s) => s.tail),
  });
  row(`  reference agent one-shot breakdown (median)`, 'info', phases(refSamples, false), 'info', {
    startToFirstRequest: refSamples.map((s) => s.startToFirstRequest),
    gap1: refSamples.map((s) => s.gap1),
    tail: refSamples.map((s) => s.tail),
  });
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
/** SPEC §12: navi's median gap ≤ this × the reference agent's, at every history size. */
const GAP_RATIO = 1.2;
/** SPEC §12 "flat as history grows": navi's median gap at the largest history ≤ this × at the smallest. */
const FLAT_RATIO = 1.5;

/** `history(n)` as the reference agent reads it: Ollama's wire shape (tool_calls[].function). */
function wireHistoryFile(n: number): string {
  const file = path.join(tmp, `history-${n}.json`);
  if (!fs.existsSync(file)) {
    const wire = history(n).map((m) =>
      m.tool_calls ? { ...m, tool_calls: (m.tool_calls as Array<{ name: string; arguments: unknown }>).map((c) => ({ function: { name: c.name, arguments: c.arguments } })) } : m,
    );
    fs.writeFileSync(file, JSON.stringify(wire));
  }
  return file;
}

interface GapRun {
  gaps: number[];
  bytes: number[];
  bodies: Array<Record<string, unknown> | undefined>;
}

/** Per-iteration gaps from the fake's timestamps: response k flushed → request k+1 received. */
function gapsOf(chats: ReturnType<TimedFake['chats']>): number[] {
  const gaps: number[] = [];
  for (let k = 0; k + 1 < chats.length; k++) gaps.push((chats[k + 1]?.tBody ?? Number.NaN) - (chats[k]?.tFinish ?? Number.NaN));
  return gaps;
}

/** navi continuing a seeded session of `n` messages through GAP_TURNS todo calls. */
async function naviGapRun(fake: TimedFake, backend: Backend, session: string): Promise<GapRun | { error: string }> {
  const from = fake.play(toolLoopScript(GAP_TURNS));
  const r = await runNavi(['run', '-o', 'json', '--quiet', '--session', session, 'Continue the audit.'], {
    env: { ...backend.env, OLLAMA_NUM_CTX: String(BIG_CTX) },
    cwd: work,
  });
  const chats = fake.chats(from);
  fake.forgetBodies();
  if (r.code !== 0 || resultOf(r).status !== 'success' || chats.length !== GAP_TURNS + 1) {
    return { error: `${describeFailure(r)} (${chats.length} chat requests)` };
  }
  return { gaps: gapsOf(chats), bytes: chats.map((c) => c.bytes), bodies: chats.map((c) => c.body) };
}

/** The reference agent on the same script, seeded with the same `n` messages of history. */
async function referenceGapRun(fake: TimedFake, backend: Backend, n: number): Promise<GapRun | { error: string }> {
  const script = toolLoopScript(GAP_TURNS);
  const from = fake.play(script);
  const r = await runReference(['--model', MODEL, '--history', wireHistoryFile(n), '--max-iterations', String(GAP_TURNS + 5), 'Continue the audit.'], {
    env: backend.env,
    cwd: work,
  });
  const chats = fake.chats(from);
  fake.forgetBodies();
  if (r.code !== 0 || r.stdout.trim() !== script.turns[script.turns.length - 1]?.content || chats.length !== GAP_TURNS + 1) {
    return { error: `reference agent: exit ${r.code ?? r.signal}: ${(r.stderr.trim() || r.stdout.trim()).slice(0, 120)} (${chats.length} chat requests)` };
  }
  return { gaps: gapsOf(chats), bytes: chats.map((c) => c.bytes), bodies: [] };
}

/**
 * SPEC §12: navi's median gap per tool iteration as a ratio to the reference agent's, over
 * `sizes` messages of history; `opts.gapRounds` rounds, each on freshly seeded sessions, with navi
 * and the reference alternating which runs first. Gaps are pooled over the rounds.
 */
async function figureGaps(fake: TimedFake, backend: Backend, sizes: number[]): Promise<void> {
  const target = `≤ ${GAP_RATIO.toFixed(2)}× reference (median)`;
  const navi = new Map<number, number[]>(sizes.map((n) => [n, []]));
  const ref = new Map<number, number[]>(sizes.map((n) => [n, []]));
  const naviBytes = new Map<number, number[]>();
  const refBytes = new Map<number, number[]>();
  const failed = new Map<number, string>();
  let prefixBodies: GapRun['bodies'] | undefined;
  for (let round = 0; round < opts.gapRounds; round++) {
    let ids: Map<number, string>;
    try {
      ids = await seedHistories(backend, sizes.filter((n) => !failed.has(n)));
    } catch (err) {
      row(`harness gap per tool iteration, ${backend.name}`, target, `error seeding history: ${String(err)}`.slice(0, 200), 'error');
      return;
    }
    for (const [i, n] of sizes.entries()) {
      if (failed.has(n)) continue;
      for (const who of (round + i) % 2 === 0 ? ['navi', 'reference'] : ['reference', 'navi']) {
        const run = who === 'navi' ? await naviGapRun(fake, backend, ids.get(n) ?? '') : await referenceGapRun(fake, backend, n);
        if ('error' in run) {
          failed.set(n, run.error);
          break;
        }
        (who === 'navi' ? navi : ref).get(n)?.push(...run.gaps);
        if (who === 'navi') {
          naviBytes.set(n, run.bytes);
          if (round === 0 && n === sizes[sizes.length - 1]) prefixBodies = run.bodies;
        } else {
          refBytes.set(n, run.bytes);
        }
      }
    }
  }
  const medians: number[] = [];
  const refMedians: number[] = [];
  const kb = (xs: number[] | undefined): string => `${Math.round((xs?.[0] ?? 0) / 1024)}→${Math.round((xs?.[xs.length - 1] ?? 0) / 1024)} KB`;
  for (const n of sizes) {
    const label = `harness gap per tool iteration, ${backend.name}, ${n} msgs`;
    const error = failed.get(n);
    if (error !== undefined) {
      row(label, target, `error: ${error}`, 'error');
      continue;
    }
    const gaps = navi.get(n) ?? [];
    const refGaps = ref.get(n) ?? [];
    const m = median(gaps);
    const mr = median(refGaps);
    medians.push(m);
    refMedians.push(mr);
    row(
      label,
      target,
      `${(m / mr).toFixed(2)}× (navi ${ms(m, 2)} vs reference ${ms(mr, 2)}, medians of ${gaps.length} iterations)`,
      check(m / mr <= GAP_RATIO),
      { ratio: m / mr, gaps, referenceGaps: refGaps, bytes: naviBytes.get(n), referenceBytes: refBytes.get(n) },
    );
    row(
      `  ${backend.name} gap at ${n} msgs, absolute`,
      'info',
      `navi median ${ms(m, 2)}, p90 ${ms(p90(gaps), 2)} (request ${kb(naviBytes.get(n))}); ` +
        `reference median ${ms(mr, 2)}, p90 ${ms(p90(refGaps), 2)} (request ${kb(refBytes.get(n))})`,
      'info',
    );
  }
  if (medians.length === sizes.length) {
    const growth = (medians[medians.length - 1] ?? 0) / (medians[0] ?? 0);
    const refGrowth = (refMedians[refMedians.length - 1] ?? 0) / (refMedians[0] ?? 0);
    const delta = (medians[medians.length - 1] ?? 0) - (medians[0] ?? 0);
    row(
      `  ${backend.name} gap growth ${sizes[0]}→${sizes[sizes.length - 1]} msgs`,
      `flat (≤ ${FLAT_RATIO.toFixed(1)}× own gap at ${sizes[0]})`,
      `${growth.toFixed(2)}× (${delta >= 0 ? '+' : ''}${ms(delta, 2)}); reference (rebuilds each request) ${refGrowth.toFixed(2)}×`,
      check(growth <= FLAT_RATIO),
      { medians, referenceMedians: refMedians, growth, referenceGrowth: refGrowth },
    );
  }
  if (prefixBodies) prefixCheck(backend, prefixBodies);
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
  // Issue 17's rule, what SWA and hybrid models need (test/support/prefix-rule.ts): request N's
  // whole rendered prompt less its last few tokens is a prefix of N+1's, on every renderer.
  const rule = new Map<string, { pairs: number; breaks: string[] }>(RENDERERS.map((r) => [r, { pairs: 0, breaks: [] }]));
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
      for (const renderer of RENDERERS) {
        const tally = rule.get(renderer);
        if (tally === undefined) continue;
        tally.pairs += Math.max(0, group.length - 1);
        tally.breaks.push(...prefixRuleBreaks(group, { renderer, label: `${run.name}, "${first.slice(0, 30)}"` }));
      }
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
  for (const [renderer, { pairs, breaks }] of rule) {
    row(
      `rendered prefix kept whole less the last tokens, ${renderer} (${backend.name})`,
      '100% of pairs',
      `${pairs - breaks.length}/${pairs} pairs` + (breaks.length > 0 ? `; first break: ${(breaks[0] ?? '').split('\n')[0]?.slice(0, 200)}` : ''),
      check(breaks.length === 0),
      { pairs, breaks: breaks.length },
    );
  }
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

/** One run of the nodes figure (bench/node-versions.ts) under `node` on PGlite in `dataDir`, with peak RSS. */
async function pgliteRunOn(fake: TimedFake, what: NodesRun, node: string, dataDir: string): Promise<Measured> {
  const backend: Backend = { name: 'PGlite', env: childEnv(fake.url, { NAVI_DATA_DIR: dataDir }), store: { dataDir }, node };
  if (what === 'oneshot') {
    const s = await oneShot(fake, backend, true);
    return s.sample && s.rssKb ? { wallMs: s.sample.wallMs, rssKb: s.rssKb } : { error: s.error ?? 'no RSS figure' };
  }
  const r = await runNavi(['sessions', 'list', '-o', 'json'], { env: backend.env, cwd: work, measureRss: true, node });
  if (r.code !== 0 || !r.stdout.includes('"sessions"')) return { error: describeFailure(r) };
  return r.maxRssKb ? { wallMs: r.wallMs, rssKb: r.maxRssKb } : { error: 'no RSS figure' };
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} not found: run npm run build (npm run bench does)`);
  const naviNode = nodeVersion(opts.node);
  if ('error' in naviNode) throw new Error(`--node: ${naviNode.error}`);
  const started = performance.now();
  const onNode = opts.node === process.execPath ? '' : ` · navi on node ${naviNode.version} (${opts.node})`;
  const envLine =
    `navi bench · node ${process.version}${onNode} · ${os.cpus().length} CPU (${os.cpus()[0]?.model.trim() ?? '?'}) · ` +
    `load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} · ${new Date().toISOString()} · ${path.relative(process.cwd(), MAIN) || MAIN}`;
  const busy = os.loadavg()[0] ?? 0;
  const busyNote =
    busy > os.cpus().length * 0.5
      ? `\nWARNING: the machine is busy (1-min load ${busy.toFixed(1)} on ${os.cpus().length} CPUs): timings are inflated; re-run on an idle machine.`
      : '';
  if (!opts.json) process.stderr.write(`${envLine}${busyNote}\n(progress on stderr; the table follows on stdout)\n`);

  if (want('startup')) figureStartup();
  // Issue 22: what --sandbox adds to one shell command (bench/sandbox.ts).
  if (want('sandbox')) await figureSandbox({ runs: 50, work, row, median });

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
      const pgliteSample = await figureOneShot(fake, pglite, 2);
      let pgSample: OneShotSample | null = null;
      if (postgresBackend) pgSample = await figureOneShot(fake, postgresBackend, 1.5);
      else row('one-shot run, 1 tool turn, PostgreSQL', '≤ 1.5× reference', skipped, 'skip');
      figureFirstRequest(pgSample ?? pgliteSample);
    }

    // 3. Harness gap per iteration.
    if (want('gap')) {
      const sizes = [10, 100, 1000];
      await figureGaps(fake, pglite, sizes);
      if (postgresBackend) await figureGaps(fake, postgresBackend, sizes);
      else row('harness gap per tool iteration, PostgreSQL', `≤ ${GAP_RATIO.toFixed(2)}× reference (median)`, skipped, 'skip');
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

    // Issue 12: MCP servers as tools (bench/mcp.ts), on PostgreSQL when there is one.
    if (want('mcp')) {
      const backend = postgresBackend ?? pglite;
      await figureMcp({
        runs: opts.runs,
        work,
        env: backend.env,
        play: (script) => fake.play(script),
        chats: (from) => fake.chats(from),
        runNavi: (args) => runNavi(args, { env: backend.env, cwd: work }),
        row,
        median,
      });
    }

    // Issue 21: the job queue (bench/queue.ts), PostgreSQL only.
    if (want('queue')) {
      if (postgresBackend && 'url' in pg) {
        await figureQueue({
          main: MAIN,
          node: opts.node,
          work,
          env: postgresBackend.env,
          url: pg.url,
          play: (script) => fake.play(script),
          chats: (from) => fake.chats(from),
          row,
          median,
        });
      } else row('queue: jobs/s and enqueue → first model request', 'info', skipped, 'skip');
    }
    // Issue 19: navi serve with 50 subscribers on one turn (bench/serve.ts), on PostgreSQL when there is one.
    if (want('serve')) {
      const backend = postgresBackend ?? pglite;
      const { figureServe } = await import('./serve.js');
      await figureServe({
        rounds: Math.max(2, opts.gapRounds),
        work,
        env: backend.env,
        main: MAIN,
        node: opts.node,
        play: (script) => fake.play(script),
        chats: (from) => fake.chats(from),
        row,
        median,
      });
    }
    // Issue 40: the PGlite one-shot on other Node versions (bench/node-versions.ts).
    if (want('nodes')) {
      const measure = (what: NodesRun, node: string, dataDir: string): Promise<Measured> => pgliteRunOn(fake, what, node, dataDir);
      const nodeBin = path.join(REPO, '.ci', 'node-bin');
      await figureNodes({ runs: opts.runs, own: process.execPath, others: opts.otherNodes, nodeBin, dir: path.join(tmp, 'nodes'), measure, row, median });
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
