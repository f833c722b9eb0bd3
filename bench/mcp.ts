/**
 * The MCP figures of `npm run bench` (`--only mcp`; issue 12), each against a floor measured in
 * the same run, interleaved:
 * - one-shot run with one stdio MCP server: navi's extra wall time over the same run without the
 *   server, minus the server's own time to answer `initialize` + `tools/list` (a minimal raw
 *   JSON-RPC client, no SDK, spawning the same server) — target ≤ +50 ms: the server's start
 *   hides behind navi's own start-up;
 * - harness gap per MCP tool call: navi's median gap per tool iteration calling the server's
 *   `filler_0`, minus the gap calling a built-in (`todo list`), minus the server's own round trip for
 *   `tools/call filler_0` (the raw client) — target ≤ 3 ms;
 * - first request with the default profile and a 10-tool server: its bytes (info).
 * The server is navi's SDK test server (test/support/mcp-test-server.js) as a plain 10-tool server.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { FakeScript, FakeTurn } from '../test/support/fake-ollama.js';

const SERVER = fileURLToPath(new URL('../test/support/mcp-test-server.js', import.meta.url));
/** A 10-tool server (the first-request figure). */
const SERVER_ARGS = [SERVER, '--tools', '10', '--only-fillers'];
/** Tool iterations per gap run. */
const GAP_TURNS = 30;

/** What bench/run.ts lends this file (its helpers, so rows and runs look alike). */
export interface McpBenchContext {
  runs: number;
  work: string;
  env: NodeJS.ProcessEnv;
  play(script: FakeScript): number;
  chats(from: number): Array<{ tBody?: number; tFinish?: number; bytes: number; body: Record<string, unknown> | undefined }>;
  runNavi(args: string[]): Promise<{ code: number | null; wallMs: number; stdout: string; stderr: string }>;
  row: (figure: string, target: string, measured: string, verdict: 'pass' | 'FAIL' | 'info' | 'error', data?: Record<string, unknown>) => void;
  median: (xs: number[]) => number;
}

const ms = (x: number, digits = 0): string => (Number.isFinite(x) ? `${x.toFixed(digits)} ms` : 'n/a');

/**
 * The server's own times, measured by a minimal client speaking raw JSON-RPC over its stdio:
 * spawn → `tools/list` answered, and the round trip of each `tools/call`.
 */
async function rawServerTimes(calls: number): Promise<{ startMs: number; callMs: number[] }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, SERVER_ARGS, { stdio: ['pipe', 'pipe', 'ignore'] });
  let buffer = '';
  const waiting = new Map<number, (value: unknown) => void>();
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n')) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      const message = JSON.parse(line) as { id?: number };
      if (typeof message.id === 'number') waiting.get(message.id)?.(message);
    }
  });
  let nextId = 1;
  const request = (method: string, params: unknown): Promise<unknown> =>
    new Promise((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  try {
    await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } });
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    await request('tools/list', {});
    const startMs = performance.now() - t0;
    const callMs: number[] = [];
    for (let i = 0; i < calls; i++) {
      const t = performance.now();
      await request('tools/call', { name: 'filler_0', arguments: { id: 'x' } });
      callMs.push(performance.now() - t);
    }
    return { startMs, callMs };
  } finally {
    child.kill('SIGKILL');
  }
}

function withServer(work: string, on: boolean): void {
  const file = path.join(work, '.mcp.json');
  if (on) fs.writeFileSync(file, JSON.stringify({ mcpServers: { bench: { command: process.execPath, args: SERVER_ARGS } } }));
  else fs.rmSync(file, { force: true });
}

const ONE_TOOL_TURN: FakeScript = {
  turns: [{ tool_calls: [{ name: 'list_dir', arguments: { path: '.' } }] }, { content: 'The directory holds README.md, package.json and src/.' }],
  on_exhausted: 'error',
};

function loopScript(call: FakeTurn): FakeScript {
  return { turns: [...Array.from({ length: GAP_TURNS }, () => call), { content: 'done' }], on_exhausted: 'error' };
}

async function oneShot(ctx: McpBenchContext, mcp: boolean): Promise<{ wallMs: number; firstBytes: number; tools: number } | string> {
  withServer(ctx.work, mcp);
  const from = ctx.play(ONE_TOOL_TURN);
  const r = await ctx.runNavi(['run', '-o', 'json', '--quiet', 'List the files in this directory.']);
  const chats = ctx.chats(from);
  if (r.code !== 0 || chats.length !== 2) return `exit ${String(r.code)}: ${r.stderr.trim().slice(0, 160)} (${chats.length} chat requests)`;
  const tools = Array.isArray(chats[0]?.body?.tools) ? (chats[0]?.body?.tools as unknown[]).length : 0;
  return { wallMs: r.wallMs, firstBytes: chats[0]?.bytes ?? 0, tools };
}

async function gapRun(ctx: McpBenchContext, call: FakeTurn): Promise<number[] | string> {
  const from = ctx.play(loopScript(call));
  const r = await ctx.runNavi(['run', '-o', 'json', '--quiet', 'Call the tool repeatedly.']);
  const chats = ctx.chats(from);
  if (r.code !== 0 || chats.length !== GAP_TURNS + 1) return `exit ${String(r.code)}: ${r.stderr.trim().slice(0, 160)} (${chats.length} chat requests)`;
  const gaps: number[] = [];
  for (let k = 0; k + 1 < chats.length; k++) gaps.push((chats[k + 1]?.tBody ?? Number.NaN) - (chats[k]?.tFinish ?? Number.NaN));
  return gaps;
}

export async function figureMcp(ctx: McpBenchContext): Promise<void> {
  const { median, row } = ctx;
  // 1. One-shot run with one stdio server: with vs without, and the server's own start.
  const label = 'one-shot run, 1 stdio MCP server: extra time over the server\'s own initialize + tools/list';
  const without: number[] = [];
  const withMcp: number[] = [];
  const serverStart: number[] = [];
  let first: { plain: number; mcp: number; tools: number; plainTools: number } | undefined;
  // Unmeasured first runs (file caches, the database's first use).
  const warmups = [await oneShot(ctx, true), await oneShot(ctx, false)];
  const warm = warmups.find((w) => typeof w === 'string');
  if (warm !== undefined) {
    row(label, '≤ +50 ms', `error: ${String(warm)}`, 'error');
    withServer(ctx.work, false);
    return;
  }
  for (let i = 0; i < ctx.runs; i++) {
    const order = i % 2 === 0 ? (['plain', 'mcp', 'raw'] as const) : (['raw', 'mcp', 'plain'] as const);
    for (const who of order) {
      if (who === 'raw') {
        serverStart.push((await rawServerTimes(0)).startMs);
        continue;
      }
      const r = await oneShot(ctx, who === 'mcp');
      if (typeof r === 'string') {
        row(label, '≤ +50 ms', `error: ${r}`, 'error');
        withServer(ctx.work, false);
        return;
      }
      (who === 'mcp' ? withMcp : without).push(r.wallMs);
      if (who === 'mcp') first = { plain: first?.plain ?? 0, mcp: r.firstBytes, tools: r.tools, plainTools: first?.plainTools ?? 0 };
      else first = { mcp: first?.mcp ?? 0, tools: first?.tools ?? 0, plain: r.firstBytes, plainTools: r.tools };
    }
  }
  const extra = median(withMcp) - median(without);
  const overhead = extra - median(serverStart);
  row(
    label,
    '≤ +50 ms',
    `${overhead >= 0 ? '+' : ''}${ms(overhead)} (run ${ms(median(withMcp))} with the server vs ${ms(median(without))} without: +${ms(extra)}; the server alone answers tools/list ${ms(median(serverStart))} after spawn; medians of ${ctx.runs}, interleaved)`,
    overhead <= 50 ? 'pass' : 'FAIL',
    { overhead, withMcp, without, serverStart },
  );
  if (first) {
    row(
      '  first request, default profile + a 10-tool MCP server',
      'info',
      `${first.mcp.toLocaleString('en')} B (${first.tools} tools) vs ${first.plain.toLocaleString('en')} B (${first.plainTools} tools) without the server: +${(first.mcp - first.plain).toLocaleString('en')} B`,
      'info',
      { withMcp: first.mcp, without: first.plain },
    );
  }

  // 2. Harness gap per MCP tool call.
  withServer(ctx.work, true);
  const gapLabel = 'harness gap per MCP tool call, over a built-in call and the server\'s own round trip';
  const mcpGaps: number[] = [];
  const builtinGaps: number[] = [];
  const serverCalls: number[] = [];
  for (let i = 0; i < Math.max(1, Math.ceil(ctx.runs / 2)); i++) {
    const a = await gapRun(ctx, { tool_calls: [{ name: 'mcp__bench__filler_0', arguments: { id: 'x' } }] });
    const b = await gapRun(ctx, { tool_calls: [{ name: 'todo', arguments: { action: 'list' } }] });
    if (typeof a === 'string' || typeof b === 'string') {
      row(gapLabel, '≤ 3 ms', `error: ${typeof a === 'string' ? a : String(b)}`, 'error');
      withServer(ctx.work, false);
      return;
    }
    mcpGaps.push(...a);
    builtinGaps.push(...b);
    serverCalls.push(...(await rawServerTimes(GAP_TURNS)).callMs);
  }
  withServer(ctx.work, false);
  const harness = median(mcpGaps) - median(builtinGaps) - median(serverCalls);
  row(
    gapLabel,
    '≤ 3 ms',
    `${ms(harness, 2)} (gap ${ms(median(mcpGaps), 2)} per MCP call vs ${ms(median(builtinGaps), 2)} per todo call; the server's own call round trip ${ms(median(serverCalls), 2)}; medians of ${mcpGaps.length})`,
    harness <= 3 ? 'pass' : 'FAIL',
    { harness, mcpGaps, builtinGaps, serverCalls },
  );
}
