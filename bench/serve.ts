/**
 * The `navi serve` figures of `npm run bench` (`--only serve`; issue 19), against a floor measured
 * in the same run, interleaved: one `navi serve` process, a session turn of tool iterations whose
 * model streams one character per chunk (~1,000 events/s), run with no subscriber and with 50
 * WebSocket subscribers reading plus one that stopped reading.
 * - harness gap per tool iteration with 50 subscribers ÷ the gap with none — target ≤ 1.2×
 *   ("unchanged within noise": a subscriber never slows the agent);
 * - the subscriber that stopped reading is cut off (the server says so on stderr) — pass/FAIL;
 * - events per second delivered, frames each subscriber got, and the server's peak RSS (info:
 *   memory stays bounded because a cut-off subscriber's backlog is dropped).
 */
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import type { FakeScript, FakeTurn } from '../test/support/fake-ollama.js';

/** Subscribers that read. */
const SUBSCRIBERS = 50;
/** Tool iterations per turn, and characters (one event each) the model streams per iteration. */
const ITERATIONS = 20;
const CHARS = 500;
const GAP_RATIO = 1.2;
const READERS = fileURLToPath(new URL('./serve-readers.js', import.meta.url));
/** The flood that fills a stalled subscriber's buffers: large events, several times the OS's socket buffers. */
const FLOOD_EVENTS = 1_500;
const FLOOD_CHARS = 16_000;

export interface ServeBenchContext {
  rounds: number;
  work: string;
  env: NodeJS.ProcessEnv;
  main: string;
  /** The Node binary navi runs on (bench --node). */
  node: string;
  play(script: FakeScript): number;
  chats(from: number): Array<{ tBody?: number; tFinish?: number }>;
  row: (figure: string, target: string, measured: string, verdict: 'pass' | 'FAIL' | 'info' | 'error', data?: Record<string, unknown>) => void;
  median: (xs: number[]) => number;
}

const ms = (x: number, digits = 2): string => (Number.isFinite(x) ? `${x.toFixed(digits)} ms` : 'n/a');

function turnScript(): FakeScript {
  const iteration: FakeTurn = { content: 'x'.repeat(CHARS), chunk_size: 1, chunk_delay_ms: 1, tool_calls: [{ name: 'todo', arguments: { action: 'list' } }] };
  return { turns: [...Array.from({ length: ITERATIONS }, () => iteration), { content: 'done.' }] };
}

interface Server {
  child: ChildProcess;
  url: string;
  stderr: () => string;
}

/** navi serve always wants a token (issue 35): the bench gives one, and sends it everywhere. */
const TOKEN = randomBytes(24).toString('base64url');
const AUTH = { authorization: `Bearer ${TOKEN}` };

async function startServe(ctx: ServeBenchContext): Promise<Server> {
  const child = spawn(ctx.node, [ctx.main, 'serve', '--port', '0', '-o', 'json'], { cwd: ctx.work, env: { ...ctx.env, NAVI_SERVE_TOKEN: TOKEN }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.includes('serve_listening'));
      if (line !== undefined) resolve(String((JSON.parse(line) as { url: string }).url));
    });
    child.once('exit', (code) => reject(new Error(`navi serve exited (${String(code)}): ${err}`)));
  });
  return { child, url, stderr: () => err };
}

async function api(url: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}${path}`, { method, headers: { ...AUTH, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  return (await res.json()) as Record<string, unknown>;
}

/** A stalled subscriber: open, then its socket paused (it reads nothing more). */
function stalledReader(url: string, sessionId: string): Promise<WebSocket> {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/ws/sessions/${sessionId}`, { headers: AUTH });
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      ws.pause();
      resolve(ws);
    });
    ws.once('error', reject);
  });
}

/** `n` reading subscribers in their own process: resolves when all are open, then with their frame counts. */
async function readers(url: string, sessionId: string, n: number): Promise<{ child: ChildProcess; frames: Promise<number[]> }> {
  const child = spawn(process.execPath, [READERS, `${url.replace(/^http/, 'ws')}/ws/sessions/${sessionId}`, String(n)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NAVI_SERVE_TOKEN: TOKEN },
  });
  let out = '';
  let ready: () => void = () => undefined;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  const frames = new Promise<number[]>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('ready\n')) ready();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line !== undefined) resolve((JSON.parse(line) as { frames: number[] }).frames);
    });
    // 'close': after stdout has been read to its end (its last line arrives before it).
    child.once('close', (code) => reject(new Error(`readers exited (${String(code)}) before every one got the result`)));
  });
  frames.catch(() => undefined);
  await Promise.race([isReady, frames]);
  return { child, frames };
}

async function untilIdle(url: string, id: string): Promise<void> {
  for (;;) {
    if ((await api(url, 'GET', `/sessions/${id}`)).status === 'idle') return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** One turn with `n` readers (and one stalled when n > 0); the gaps between model calls. */
async function oneRun(ctx: ServeBenchContext, server: Server, n: number, script: FakeScript = turnScript(), withStalled = n > 0): Promise<{ gaps: number[]; events: number; seconds: number; frames: number[] }> {
  const id = String((await api(server.url, 'POST', '/sessions', {})).id);
  const reading = n > 0 ? await readers(server.url, id, n) : null;
  const stalled = withStalled ? await stalledReader(server.url, id) : null;
  const from = ctx.play(script);
  const t0 = performance.now();
  await api(server.url, 'POST', `/sessions/${id}/messages`, { content: 'Go through the list.' });
  const frames = reading !== null ? await reading.frames : [];
  await untilIdle(server.url, id);
  const seconds = (performance.now() - t0) / 1000;
  const chats = ctx.chats(from);
  const gaps: number[] = [];
  for (let i = 1; i < chats.length; i++) {
    const prev = chats[i - 1]?.tFinish;
    const next = chats[i]?.tBody;
    if (prev !== undefined && next !== undefined) gaps.push(next - prev);
  }
  reading?.child.kill();
  stalled?.terminate();
  const shown = await api(server.url, 'GET', `/sessions/${id}`);
  return { gaps, events: Number(shown.next_seq), seconds, frames };
}

function peakRssKb(pid: number | undefined): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${String(pid)}/status`, 'utf8'));
    return m?.[1] !== undefined ? Number(m[1]) : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

export async function figureServe(ctx: ServeBenchContext): Promise<void> {
  let server: Server;
  try {
    server = await startServe(ctx);
  } catch (err) {
    ctx.row('navi serve: harness gap with 50 subscribers', `≤ ${GAP_RATIO}× without`, `error: ${String(err)}`.slice(0, 200), 'error');
    return;
  }
  try {
    const alone: number[] = [];
    const watched: number[] = [];
    let rate = 0;
    let frames: number[] = [];
    for (let round = 0; round < ctx.rounds; round++) {
      for (const n of round % 2 === 0 ? [0, SUBSCRIBERS] : [SUBSCRIBERS, 0]) {
        const run = await oneRun(ctx, server, n);
        (n === 0 ? alone : watched).push(...run.gaps);
        if (n > 0) {
          rate = run.events / run.seconds;
          frames = run.frames;
        }
      }
    }
    const m0 = ctx.median(alone);
    const m50 = ctx.median(watched);
    ctx.row(
      'navi serve: harness gap per tool iteration, 50 subscribers',
      `≤ ${GAP_RATIO.toFixed(2)}× no subscriber (median)`,
      `${(m50 / m0).toFixed(2)}× (${ms(m50)} vs ${ms(m0)}, medians of ${watched.length} iterations)`,
      m50 / m0 <= GAP_RATIO ? 'pass' : 'FAIL',
      { ratio: m50 / m0, watched, alone },
    );
    // The flood: large events, so a stalled subscriber's socket buffers and queue fill.
    await oneRun(ctx, server, 0, { turns: [{ content: 'y'.repeat(FLOOD_EVENTS * FLOOD_CHARS), chunk_size: FLOOD_CHARS, chunk_delay_ms: 1, ignores_num_predict: true }] }, true);
    const cut = /fell behind and was cut off/.test(server.stderr());
    ctx.row('navi serve: a subscriber that stops reading is cut off', 'cut off', cut ? 'cut off (server log)' : 'still connected', cut ? 'pass' : 'FAIL');
    ctx.row(
      '  navi serve: events per second, frames per subscriber, peak RSS',
      'info',
      `${rate.toFixed(0)} events/s to ${SUBSCRIBERS}+1 subscribers; each reader got ${Math.min(...frames)}–${Math.max(...frames)} frames; server peak RSS ${(peakRssKb(server.child.pid) / 1024).toFixed(1)} MB`,
      'info',
    );
  } catch (err) {
    ctx.row('navi serve: harness gap with 50 subscribers', `≤ ${GAP_RATIO}× without`, `error: ${String(err)}`.slice(0, 200), 'error');
  } finally {
    server.child.kill('SIGTERM');
    await new Promise((r) => server.child.once('exit', r));
  }
}
