/**
 * `navi serve` under test: the built CLI as a subprocess against the fake Ollama (scenario()),
 * real HTTP with fetch and real WebSockets with the `ws` client (it can send an Authorization
 * header, as scripts do). The server always has a token: the one the test gave
 * (NAVI_SERVE_TOKEN), else the one it keeps, read from the file its `serve_listening` line names,
 * as a script would. Waits are on conditions; the hang guards are far above real time.
 */
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import type { NaviProcess } from '../support/cli.js';
import type { Scenario } from '../scenario/helpers.js';

export const HANG_GUARD_MS = 60_000;

export interface Served {
  proc: NaviProcess;
  url: string;
  /** The server's token (given, or read from its token file). */
  token: string;
  /** The token file the listening line named (null when the token was given). */
  tokenFile: string | null;
  /** `{authorization: 'Bearer …'}`. */
  auth: Record<string, string>;
  /** fetch + JSON with the token (a header given here wins; one given as '' is not sent): status and parsed body. */
  api: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number; body: Record<string, unknown> }>;
}

/** The token a `serve_listening` line leads to: the file it names, else the one given. */
export function tokenOf(listening: Record<string, unknown>, given: string | undefined): string {
  if (typeof listening.token_file === 'string') return readFileSync(listening.token_file, 'utf8').trim();
  if (given === undefined) throw new Error('serve_listening names no token file and the test gave no token');
  return given;
}

/** Starts `navi serve --port 0 -o json` in the scenario and waits for its listening line. */
export async function serve(s: Scenario, extraArgs: readonly string[] = [], env: Record<string, string> = {}): Promise<Served> {
  const proc = s.start(['serve', '--port', '0', '-o', 'json', ...extraArgs], { env: { NAVI_SERVE_POLL_MS: '100', ...env }, timeoutMs: 170_000 });
  const listening = await proc.waitForEvent('serve_listening');
  const url = String(listening.url);
  const token = tokenOf(listening, env.NAVI_SERVE_TOKEN);
  const auth = { authorization: `Bearer ${token}` };
  const api: Served['api'] = async (method, path, body, headers = {}) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: Object.fromEntries(Object.entries({ ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...auth, ...headers }).filter(([, v]) => v !== '')),
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      parsed = { raw: text };
    }
    return { status: res.status, body: parsed };
  };
  return { proc, url, token, tokenFile: typeof listening.token_file === 'string' ? listening.token_file : null, auth, api };
}

/** Stops the server with SIGTERM and waits for its exit. */
export async function stopServe(served: Served): Promise<number | null> {
  served.proc.kill('SIGTERM');
  return (await served.proc.result).code;
}

/** A WebSocket subscriber that collects every frame. */
export interface Sub {
  ws: WebSocket;
  frames: Array<Record<string, unknown>>;
  /** Resolves once a frame matches (already received ones count). */
  waitFor: (match: (f: Record<string, unknown>) => boolean, what: string) => Promise<Record<string, unknown>>;
  closed: Promise<{ code: number; reason: string }>;
}

export function subscribe(url: string, path: string, opts: { headers?: Record<string, string>; protocols?: string[] } = {}): Promise<Sub> {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}${path}`, opts.protocols ?? [], { headers: opts.headers ?? {} });
  const frames: Array<Record<string, unknown>> = [];
  const waiters: Array<{ match: (f: Record<string, unknown>) => boolean; resolve: (f: Record<string, unknown>) => void }> = [];
  ws.on('message', (data: Buffer) => {
    const f = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
    frames.push(f);
    for (const w of waiters.splice(0)) {
      if (w.match(f)) w.resolve(f);
      else waiters.push(w);
    }
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  const waitFor: Sub['waitFor'] = (match, what) => {
    const seen = frames.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no frame: ${what}; got ${JSON.stringify(frames.map((f) => f.type))}`)), HANG_GUARD_MS);
      waiters.push({
        match,
        resolve: (f) => {
          clearTimeout(timer);
          resolve(f);
        },
      });
    });
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, frames, waitFor, closed }));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode ?? 0}`)));
    ws.once('error', reject);
  });
}

/** The status an upgrade was refused with (or 101 when it was accepted). */
export function upgradeStatus(url: string, path: string, opts: { headers?: Record<string, string>; protocols?: string[] } = {}): Promise<number> {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}${path}`, opts.protocols ?? [], { headers: opts.headers ?? {} });
  return new Promise((resolve) => {
    ws.once('open', () => {
      ws.close();
      resolve(101);
    });
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('error', () => resolve(0));
  });
}

/** Polls `fn` until it returns a value that is not undefined (a guard far above real time). */
export async function eventually<T>(fn: () => Promise<T | undefined>, what: string, timeoutMs = HANG_GUARD_MS): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
