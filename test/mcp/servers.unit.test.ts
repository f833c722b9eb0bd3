/**
 * The MCP client against real servers: navi's own test server (written with the SDK, stdio and
 * streamable HTTP) for the scripted cases — slow tool, crash mid-call, huge output, invalid
 * schema, `isError`, tool list change, failed starts — and the calls going through the tool
 * registry exactly as the agent makes them (validation, redaction, cap).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import type { McpConfig, McpServerConfig } from '../../src/config/mcp-schema.js';
import { McpManager, type McpWarning } from '../../src/mcp/mcp-manager.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { ToolContext, ToolSideEvent } from '../../src/tools/types.js';
import { liveGroupMembers, processGroupOf } from '../faults/helpers.js';
import { until } from '../scenario/helpers.js';

const SERVER = fileURLToPath(new URL('../support/mcp-test-server.js', import.meta.url));

/** Hang guard for tests that start a server or two (each about a second on a loaded machine). */
const SERVER_TEST_TIMEOUT_MS = 60_000;

const logRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'navi-mcp-logs-'));
afterAll(() => fs.rmSync(logRoot, { recursive: true, force: true }));

function stdio(...args: string[]): McpServerConfig {
  return { command: process.execPath, args: [SERVER, ...args] };
}

async function start(servers: Record<string, McpServerConfig>, overrides: Partial<McpConfig> = {}, env: Record<string, string | undefined> = process.env) {
  const warnings: McpWarning[] = [];
  const manager = await McpManager.start({
    config: { servers, startup_timeout_s: 30, call_timeout_s: 30, ...overrides },
    cwd: process.cwd(),
    env,
    logDir: fs.mkdtempSync(path.join(logRoot, 'run-')),
  });
  onTestFinished(() => manager.close());
  manager.onWarning((w) => warnings.push(w));
  const registry = new ToolRegistry([...manager.definitions], { maxOutputBytes: 4096 });
  const allowed = new Set(registry.names());
  const events: ToolSideEvent[] = [];
  const call = (name: string, args: unknown, signal = new AbortController().signal) => {
    const ctx = { signal, emit: (e: ToolSideEvent) => events.push(e), redact: (t: string) => t.replaceAll('sekrit-value', '[REDACTED]') } as unknown as ToolContext;
    return registry.execute(name, args, ctx, allowed);
  };
  return { manager, warnings, registry, call, events };
}

describe('MCP servers (stdio)', () => {
  it('lists tools as mcp__<server>__<tool>; a tool with an invalid schema is not offered, with a warning', async () => {
    const { manager, warnings, registry } = await start({ t: stdio() });
    expect(registry.names()).toEqual([
      'mcp__t__echo',
      'mcp__t__slow',
      'mcp__t__crash',
      'mcp__t__huge',
      'mcp__t__fail',
      'mcp__t__image',
      'mcp__t__change_tools',
      'mcp__t__spawn_child',
      'mcp__t__pid',
    ]);
    expect(manager.statuses()).toMatchObject([{ name: 't', transport: 'stdio', state: 'ready', toolCount: 10, serverInfo: { name: 'navi-test-server' } }]);
    expect(warnings).toEqual([{ code: 'mcp_tool_invalid', message: expect.stringMatching(/tool 'bad_schema' has an invalid inputSchema \(inputSchema\.properties\.x\.type/) as string }]);
    const [echo] = registry.schemas(['mcp__t__echo']);
    expect(echo?.function).toEqual({
      name: 'mcp__t__echo',
      description: 'Echo the text back.',
      parameters: { type: 'object', properties: { text: { type: 'string', description: 'what to echo' } }, required: ['text'] },
    });
  }, SERVER_TEST_TIMEOUT_MS);

  it('calls: text results, arguments checked against the server schema first, isError as a failed result, images named, huge output capped and redacted', async () => {
    const { call, events } = await start({ t: stdio() });
    expect(await call('mcp__t__echo', { text: 'hello sekrit-value' })).toEqual({ ok: true, output: 'hello [REDACTED]' });
    expect(await call('mcp__t__echo', '{"text": 42}')).toEqual({ ok: false, output: "invalid arguments for 'mcp__t__echo': text: expected string, received number" });
    expect(await call('mcp__t__echo', {})).toEqual({ ok: false, output: "invalid arguments for 'mcp__t__echo': text: required" });
    expect(await call('mcp__t__fail', {})).toEqual({ ok: false, output: 'the thing you asked for does not exist' });
    expect(await call('mcp__t__image', {})).toEqual({ ok: true, output: '[image: image/png, 300 bytes, not shown]\na picture' });
    const huge = await call('mcp__t__huge', { bytes: 5_000_000 });
    expect(huge.ok).toBe(true);
    expect(Buffer.byteLength(huge.output)).toBeLessThanOrEqual(4096 + 100);
    expect(huge.output).toMatch(/bytes omitted/);
    expect(events).toEqual([]);
  }, SERVER_TEST_TIMEOUT_MS);

  it('a call past the timeout is cancelled: a failed result and a warning, and the server keeps serving', async () => {
    const { call, events } = await start({ t: { ...stdio(), timeout_s: 0.5 } });
    const slow = await call('mcp__t__slow', { ms: 20_000 });
    expect(slow).toEqual({ ok: false, output: "MCP server 't' did not answer slow within 0.5 s (the call was cancelled)" });
    expect(events).toEqual([{ type: 'warning', code: 'mcp_call_timeout', message: slow.output }]);
    expect(await call('mcp__t__echo', { text: 'still here' })).toEqual({ ok: true, output: 'still here' });
  }, SERVER_TEST_TIMEOUT_MS);

  it("the run's stop aborts a call at once (the abort propagates, it is not a tool failure)", async () => {
    const { call } = await start({ t: stdio() });
    const controller = new AbortController();
    const pending = call('mcp__t__slow', { ms: 20_000 }, controller.signal);
    controller.abort(new DOMException('stopped by SIGINT', 'AbortError'));
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  }, SERVER_TEST_TIMEOUT_MS);

  it('a crash mid-call is a failed result naming the exit and the log; the next call starts the server again', async () => {
    const { call, events, warnings, manager } = await start({ t: stdio() });
    const before = await call('mcp__t__pid', {});
    const crashed = await call('mcp__t__crash', {});
    expect(crashed.ok).toBe(false);
    expect(crashed.output).toMatch(/^MCP server 't' crashed during crash: the server exited with code 3; its stderr is in .*t\.log; it is started again on the next call$/);
    expect(events).toEqual([{ type: 'warning', code: 'mcp_server_crashed', message: crashed.output }]);
    const log = manager.statuses()[0]?.logFile ?? '';
    expect(fs.readFileSync(log, 'utf8')).toContain('test server: crashing on purpose');
    const after = await call('mcp__t__pid', {});
    expect(after.ok).toBe(true);
    expect(after.output).not.toBe(before.output);
    // Reported by the call, not a second time by the connection.
    expect(warnings.filter((w) => w.code === 'mcp_server_crashed')).toEqual([]);
  }, SERVER_TEST_TIMEOUT_MS);

  it('the log a crash message names already holds what the server wrote last, however much it wrote', async () => {
    const { call, manager } = await start({ t: stdio() });
    const crashed = await call('mcp__t__crash', { stderr_bytes: 1024 * 1024 });
    expect(crashed.output).toMatch(/crashed during crash: .*its stderr is in /);
    const log = fs.readFileSync(manager.statuses()[0]?.logFile ?? '', 'utf8');
    expect(log.endsWith('test server: crashing on purpose\n')).toBe(true);
  }, SERVER_TEST_TIMEOUT_MS);

  it('a tool list change mid-run is reported once and not applied (the tools stay as listed at start)', async () => {
    const { call, warnings, registry } = await start({ t: stdio() });
    const schemasBefore = JSON.stringify(registry.schemas(registry.names()));
    expect(await call('mcp__t__change_tools', {})).toEqual({ ok: true, output: 'tool list changed' });
    await until(() => warnings.some((w) => w.code === 'mcp_tools_changed'), 20_000, 'the list-change warning');
    await call('mcp__t__change_tools', {});
    expect(warnings.filter((w) => w.code === 'mcp_tools_changed')).toEqual([
      { code: 'mcp_tools_changed', message: "MCP server 't' changed its tool list; this run keeps the tools it listed at start (restart navi to use the new list)" },
    ]);
    expect(JSON.stringify(registry.schemas(registry.names()))).toBe(schemasBefore);
  }, SERVER_TEST_TIMEOUT_MS);

  it('servers that fail to start cost only their own tools: exit at start, command not found, too slow to start', async () => {
    const { manager, warnings, registry } = await start(
      { ok: stdio(), dies: stdio('--exit-on-start'), missing: { command: 'navi-no-such-command-xyz' }, sluggish: stdio('--start-delay', '20000') },
      { startup_timeout_s: 3 },
    );
    expect(registry.names().every((n) => n.startsWith('mcp__ok__'))).toBe(true);
    const byName = Object.fromEntries(manager.statuses().map((s) => [s.name, s]));
    expect(byName.ok?.state).toBe('ready');
    expect(byName.dies).toMatchObject({ state: 'failed', error: expect.stringMatching(/^the server exited with code 2; its stderr is in .*dies\.log$/) as string });
    expect(byName.missing).toMatchObject({ state: 'failed', error: expect.stringMatching(/command not found: navi-no-such-command-xyz/) as string });
    expect(byName.sluggish).toMatchObject({ state: 'failed', error: expect.stringMatching(/did not start within 3 s/) as string });
    expect(fs.readFileSync(byName.dies?.logFile ?? '', 'utf8')).toContain('refusing to start');
    expect(warnings.filter((w) => w.code === 'mcp_server_failed').map((w) => w.message.split(' is not available')[0])).toEqual([
      "MCP server 'dies'",
      "MCP server 'missing'",
      "MCP server 'sluggish'",
    ]);
  }, SERVER_TEST_TIMEOUT_MS);

  it('close stops the whole process group, a grandchild included; an env reference feeds the server', async () => {
    const pidFile = path.join(fs.mkdtempSync(path.join(logRoot, 'pids-')), 'pids');
    const { manager, call } = await start({ t: { ...stdio('--pid-file', pidFile), env: { MARK: '${NAVI_TEST_MARK}' } } }, {}, { ...process.env, NAVI_TEST_MARK: 'x' });
    const child = await call('mcp__t__spawn_child', {});
    const serverPid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
    const pgid = processGroupOf(serverPid);
    expect(pgid).toBe(serverPid);
    expect(liveGroupMembers(pgid)).toContain(Number(child.output));
    await manager.close();
    await until(() => liveGroupMembers(pgid).length === 0, 10_000, `process group ${pgid} to be gone`);
  }, SERVER_TEST_TIMEOUT_MS);
});

/** Starts the test server over streamable HTTP; resolves with its URL. */
async function httpServer(...args: string[]): Promise<string> {
  const child = spawn(process.execPath, [SERVER, '--http', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  onTestFinished(() => {
    child.kill('SIGKILL');
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  await until(() => /listening on \d+/.test(out), 20_000, 'the HTTP test server');
  return `http://127.0.0.1:${/listening on (\d+)/.exec(out)?.[1] ?? ''}/mcp`;
}

describe('MCP servers (streamable HTTP)', () => {
  it('lists and calls tools; headers reference environment variables; a crash-free isError and timeout behave as over stdio', async () => {
    const url = await httpServer('--require-auth', 'tok-123456');
    const { call, manager, events } = await start({ web: { url, headers: { Authorization: 'Bearer ${NAVI_TEST_TOKEN}' }, timeout_s: 0.5 } }, {}, { NAVI_TEST_TOKEN: 'tok-123456' });
    expect(manager.statuses()).toMatchObject([{ name: 'web', transport: 'http', state: 'ready', toolCount: 10 }]);
    expect(await call('mcp__web__echo', { text: 'over http' })).toEqual({ ok: true, output: 'over http' });
    expect(await call('mcp__web__fail', {})).toEqual({ ok: false, output: 'the thing you asked for does not exist' });
    expect((await call('mcp__web__slow', { ms: 20_000 })).output).toMatch(/did not answer slow within 0\.5 s/);
    expect(events.map((e) => e.type === 'warning' && e.code)).toEqual(['mcp_call_timeout']);
  }, SERVER_TEST_TIMEOUT_MS);

  it('a wrong or missing credential is a failed start naming the problem, never the secret', async () => {
    const url = await httpServer('--require-auth', 'tok-123456');
    const wrong = await start({ web: { url, headers: { Authorization: 'Bearer ${NAVI_TEST_TOKEN}' } } }, {}, { NAVI_TEST_TOKEN: 'wrong-token-999' });
    expect(wrong.manager.statuses()[0]).toMatchObject({ state: 'failed', error: expect.stringMatching(/unauthorized/i) as string });
    expect(JSON.stringify(wrong.manager.statuses())).not.toContain('wrong-token-999');
    const missing = await start({ web: { url, headers: { Authorization: 'Bearer ${NAVI_TEST_TOKEN}' } } }, {}, {});
    expect(missing.manager.statuses()[0]).toMatchObject({ state: 'failed', error: 'headers.Authorization references ${NAVI_TEST_TOKEN}, which is not set' });
  }, SERVER_TEST_TIMEOUT_MS);
});
