/**
 * MCP servers as tools, end to end: the built CLI against the fake Ollama with real MCP
 * servers — the published `@modelcontextprotocol/server-filesystem` from npm and navi's own
 * SDK test server — configured in `.mcp.json` and `.nav-config.json`.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { REPO_ROOT } from '../support/cli.js';
import { processesMatching, reapOnFinish } from '../faults/helpers.js';
import { SCENARIO_TIMEOUT_MS, describeRun, eventsOf, expectFailure, expectValidStream, resultOf, scenario, until, writeFiles } from './helpers.js';

const FS_SERVER = path.join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
const TEST_SERVER = path.join(REPO_ROOT, 'test', 'support', 'mcp-test-server.js');

/** `.mcp.json` with the published filesystem server confined to `dir`. */
function fsServer(dir: string): Record<string, unknown> {
  return { mcpServers: { fs: { command: process.execPath, args: [FS_SERVER, dir] } } };
}

function toolNames(body: Record<string, unknown> | undefined): string[] {
  const tools = (body?.tools ?? []) as Array<{ function: { name: string } }>;
  return tools.map((t) => t.function.name);
}

forEachBackend((backend) => {
  describe('MCP servers as tools', () => {
    it('a published server (server-filesystem from npm): its tools offered as mcp__fs__*, called, results read by the model; schemas byte-stable; servers gone after exit', async () => {
      const s = await scenario(backend, {
        turns: [
          {
            tool_calls: [
              { name: 'mcp__fs__list_directory', arguments: { path: '.' } },
              { name: 'mcp__fs__read_text_file', arguments: { path: 'notes/hello.txt' } },
              { name: 'mcp__fs__read_text_file', arguments: { path: '/etc/passwd' } },
            ],
          },
          { content: 'The note says hello from MCP.' },
        ],
        on_exhausted: 'error',
      });
      writeFiles(s.cwd, { 'notes/hello.txt': 'hello from MCP\n', '.mcp.json': JSON.stringify(fsServer(s.cwd)) });
      reapOnFinish(`${FS_SERVER} ${s.cwd}`);
      const run = await s.navi(['run', '-o', 'stream-json', 'what does the note say?']);
      expect(run.code, describeRun(run)).toBe(0);
      const events = expectValidStream(run);
      const calls = eventsOf(events, 'tool_call');
      expect(calls.map((c) => [c.name, c.ok])).toEqual([
        ['mcp__fs__list_directory', true],
        ['mcp__fs__read_text_file', true],
        ['mcp__fs__read_text_file', false],
      ]);
      expect(String(calls[0]?.output)).toContain('[DIR] notes');
      expect(calls[1]?.output).toBe('hello from MCP\n');
      expect(String(calls[2]?.output)).toMatch(/outside allowed directories|Access denied/i);
      expect(resultOf(run)).toMatchObject({ status: 'success', result: 'The note says hello from MCP.' });

      const [first, second] = s.chats();
      const names = toolNames(first?.body);
      expect(names).toContain('mcp__fs__read_text_file');
      expect(names.slice(0, 3)).toEqual(['read_file', 'write_file', 'edit_file']);
      // The tool schemas are part of the prompt prefix: byte-identical from call to call.
      expect(JSON.stringify(second?.body?.tools)).toBe(JSON.stringify(first?.body?.tools));
      const readText = (first?.body?.tools as Array<{ function: { name: string; parameters: unknown } }>).find((t) => t.function.name === 'mcp__fs__read_text_file');
      expect(readText?.function.parameters).toMatchObject({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] });
      // The model's answer went back as a tool result.
      const toolMessages = (second?.body?.messages as Array<{ role: string; content: string }>).filter((m) => m.role === 'tool');
      expect(toolMessages.map((m) => m.content)).toContain('hello from MCP\n');
      expect(processesMatching(`${FS_SERVER} ${s.cwd}`)).toEqual([]);
    }, SCENARIO_TIMEOUT_MS);

    it('profiles choose: researcher gets no MCP tools; a project profile may list one server or one tool', async () => {
      const s = await scenario(backend, { turns: [{ content: 'ok' }, { content: 'ok' }, { content: 'ok' }], on_exhausted: 'error' });
      writeFiles(s.cwd, {
        '.nav-config.json': JSON.stringify({ mcp: { servers: { t: { command: process.execPath, args: [TEST_SERVER] }, fs: { command: process.execPath, args: [FS_SERVER, s.cwd] } } } }),
        'profiles/picky/config.json': JSON.stringify({ description: 'one MCP tool', tools: { agent: ['read_file'], mcp: ['t/echo', 'fs/list_directory'] } }),
        'profiles/picky/system_prompt.txt': 'Be picky.',
      });
      for (const profile of ['researcher', 'picky', 'default']) {
        const run = await s.navi(['run', '-o', 'json', '--profile', profile, 'hi']);
        expect(run.code, describeRun(run)).toBe(0);
      }
      const [researcher, picky, general] = s.chats().map((r) => toolNames(r.body).filter((n) => n.startsWith('mcp__')));
      expect(researcher).toEqual([]);
      expect(picky).toEqual(['mcp__t__echo', 'mcp__fs__list_directory']);
      expect(general).toContain('mcp__t__echo');
      expect(general).toContain('mcp__fs__read_text_file');
    }, SCENARIO_TIMEOUT_MS);

    it('a streamable HTTP server from .nav-config.json, its header read from the environment and kept out of every output', async () => {
      const s = await scenario(backend, {
        turns: [{ tool_calls: [{ name: 'mcp__web__echo', arguments: { text: 'via http' } }] }, { content: 'done' }],
        on_exhausted: 'error',
      });
      const server = spawn(process.execPath, [TEST_SERVER, '--http', '--require-auth', 'tok-9f8e7d6c'], { stdio: ['ignore', 'pipe', 'inherit'] });
      onTestFinished(() => {
        server.kill('SIGKILL');
      });
      let out = '';
      server.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      await until(() => /listening on \d+/.test(out), 20_000, 'the HTTP test server');
      const url = `http://127.0.0.1:${/listening on (\d+)/.exec(out)?.[1] ?? ''}/mcp`;
      writeFiles(s.cwd, { '.nav-config.json': JSON.stringify({ mcp: { servers: { web: { url, headers: { Authorization: 'Bearer ${WEB_TOKEN}' } } } } }) });
      const run = await s.navi(['run', '-o', 'stream-json', 'call it'], { env: { WEB_TOKEN: 'tok-9f8e7d6c' } });
      expect(run.code, describeRun(run)).toBe(0);
      const events = expectValidStream(run);
      expect(eventsOf(events, 'tool_call').map((c) => [c.name, c.ok, c.output])).toEqual([['mcp__web__echo', true, 'via http']]);
      const list = await s.navi(['mcp', 'list', '-o', 'json'], { env: { WEB_TOKEN: 'tok-9f8e7d6c' } });
      expect(JSON.parse(list.stdout)).toMatchObject({ servers: [{ name: 'web', transport: 'http', state: 'ready', endpoint: url }] });
      for (const r of [run, list]) expect(r.stdout + r.stderr).not.toContain('tok-9f8e7d6c');
    }, SCENARIO_TIMEOUT_MS);

    it('sub-agents and switch_profile never gain an MCP tool the current agent lacks', async () => {
      const s = await scenario(backend, {
        turns: [
          { tool_calls: [{ name: 'spawn_agent', arguments: { task: 'look around', profile_id: 'default' } }] },
          { content: 'sub-agent done' },
          { tool_calls: [{ name: 'switch_profile', arguments: { profile_id: 'default' } }] },
          { content: 'still read-only' },
        ],
        on_exhausted: 'error',
      });
      writeFiles(s.cwd, { '.mcp.json': JSON.stringify({ mcpServers: { t: { command: process.execPath, args: [TEST_SERVER] } } }) });
      const run = await s.navi(['run', '-o', 'stream-json', '--profile', 'researcher', 'investigate']);
      expect(run.code, describeRun(run)).toBe(0);
      const events = expectValidStream(run);
      const requests = s.chats().map((r) => toolNames(r.body));
      expect(requests).toHaveLength(4);
      for (const names of requests) expect(names.filter((n) => n.startsWith('mcp__'))).toEqual([]);
      expect(String(eventsOf(events, 'warning').find((w) => w.code === 'tools_dropped')?.message)).toContain('mcp__t__echo');
    }, SCENARIO_TIMEOUT_MS);

    it('failures are tool results plus warnings, never the end of the run: isError, timeout, crash mid-call (then a restart), a tool list change, a server that never started', async () => {
      const s = await scenario(backend, {
        turns: [
          {
            tool_calls: [
              { name: 'mcp__t__fail', arguments: {} },
              { name: 'mcp__t__slow', arguments: { ms: 30_000 } },
              { name: 'mcp__t__crash', arguments: {} },
              { name: 'mcp__t__echo', arguments: { text: 'back again' } },
              { name: 'mcp__t__change_tools', arguments: {} },
              { name: 'mcp__t__huge', arguments: { bytes: 3_000_000 } },
            ],
          },
          { content: 'Handled every failure.' },
        ],
        on_exhausted: 'error',
      });
      writeFiles(s.cwd, {
        '.mcp.json': JSON.stringify({
          mcpServers: {
            t: { command: process.execPath, args: [TEST_SERVER], timeout_s: 1 },
            broken: { command: process.execPath, args: [TEST_SERVER, '--exit-on-start'] },
          },
        }),
      });
      const run = await s.navi(['run', '-o', 'stream-json', 'try everything']);
      expect(run.code, describeRun(run)).toBe(0);
      const events = expectValidStream(run);
      const calls = eventsOf(events, 'tool_call');
      expect(calls.map((c) => [c.name, c.ok])).toEqual([
        ['mcp__t__fail', false],
        ['mcp__t__slow', false],
        ['mcp__t__crash', false],
        ['mcp__t__echo', true],
        ['mcp__t__change_tools', true],
        ['mcp__t__huge', true],
      ]);
      expect(calls[0]?.output).toBe('the thing you asked for does not exist');
      expect(calls[1]?.output).toMatch(/did not answer slow within 1 s/);
      expect(calls[2]?.output).toMatch(/crashed during crash: the server exited with code 3/);
      expect(calls[3]?.output).toBe('back again');
      const warnings = eventsOf(events, 'warning').map((w) => w.code);
      expect(warnings).toEqual(expect.arrayContaining(['mcp_server_failed', 'mcp_tool_invalid', 'mcp_call_timeout', 'mcp_server_crashed', 'mcp_tools_changed']));
      expect(String(eventsOf(events, 'warning').find((w) => w.code === 'mcp_server_failed')?.message)).toMatch(/MCP server 'broken' is not available: the server exited with code 2/);
      // The huge output reached the model capped, like shell output.
      const [first, second] = s.chats();
      const toolMessages = (second?.body?.messages as Array<{ role: string; content: string }>).filter((m) => m.role === 'tool');
      expect(Buffer.byteLength(toolMessages.at(-1)?.content ?? '')).toBeLessThan(40_000);
      // The list change was reported, not sent.
      expect(JSON.stringify(second?.body?.tools)).toBe(JSON.stringify(first?.body?.tools));
      expect(toolNames(first?.body).filter((n) => n.startsWith('mcp__broken'))).toEqual([]);
    }, SCENARIO_TIMEOUT_MS);

    it('configuration errors are exit 2 naming the file and key; a profile naming an unknown server is exit 2', async () => {
      const s = await scenario(backend, { turns: [], on_exhausted: 'error' });
      writeFiles(s.cwd, { '.mcp.json': JSON.stringify({ mcpServers: { gh: { command: 'x', args: 'not-a-list' } } }) });
      expectFailure(await s.navi(['run', 'hi']), 2, /\.mcp\.json: mcpServers\.gh\.args: must be an array of strings/);
      fs.rmSync(path.join(s.cwd, '.mcp.json'));
      writeFiles(s.cwd, {
        'profiles/p/config.json': JSON.stringify({ tools: { mcp: ['github'] } }),
        'profiles/p/system_prompt.txt': 'x',
      });
      expectFailure(await s.navi(['run', '--profile', 'p', 'hi']), 2, /profiles\/p\/config\.json: tools\.mcp: unknown MCP server github; configured: \(none/);
      expect(s.chats()).toEqual([]);
    }, SCENARIO_TIMEOUT_MS);

    it('navi mcp list / navi mcp tools: state, tool counts and start times; the tools as the model sees them; the model is never asked', async () => {
      const s = await scenario(backend, { turns: [], on_exhausted: 'error' });
      writeFiles(s.cwd, {
        '.mcp.json': JSON.stringify({
          mcpServers: {
            t: { command: process.execPath, args: [TEST_SERVER, '--tools', '2'] },
            gone: { command: 'navi-no-such-command-xyz' },
            off: { command: 'whatever', enabled: false },
          },
        }),
      });
      const list = await s.navi(['mcp', 'list', '-o', 'json']);
      expect(list.code, describeRun(list)).toBe(0);
      const servers = (JSON.parse(list.stdout) as { servers: Array<Record<string, unknown>> }).servers;
      expect(servers).toMatchObject([
        { name: 't', transport: 'stdio', state: 'ready', tool_count: 12, start_ms: expect.any(Number) as number },
        { name: 'gone', state: 'failed', tool_count: 0, error: expect.stringMatching(/command not found: navi-no-such-command-xyz/) as string },
        { name: 'off', state: 'disabled', enabled: false },
      ]);
      const text = await s.navi(['mcp', 'list']);
      expect(text.stdout).toMatch(/^SERVER\s+TRANSPORT\s+STATE\s+TOOLS\s+START/);
      expect(text.stdout).toMatch(/\nt\s+stdio\s+ready\s+12\s+\d+ ms/);
      const tools = await s.navi(['mcp', 'tools', 't', '-o', 'json']);
      expect(tools.code, describeRun(tools)).toBe(0);
      const listed = (JSON.parse(tools.stdout) as { tools: Array<{ name: string; server: string; tool: string }> }).tools;
      expect(listed.map((t) => t.name)).toContain('mcp__t__filler_1');
      expect(listed.find((t) => t.name === 'mcp__t__echo')).toMatchObject({ server: 't', tool: 'echo', parameters: { required: ['text'] } });
      expect(tools.stderr).toMatch(/warning: MCP server 't': tool 'bad_schema' has an invalid inputSchema/);
      expectFailure(await s.navi(['mcp', 'tools', 'nope']), 2, /no MCP server 'nope'; configured: t, gone, off/);
      expect(s.fake.requests).toEqual([]);
    }, SCENARIO_TIMEOUT_MS);

    it('navi doctor starts each server and names what failed and why', async () => {
      const s = await scenario(backend, { turns: [], on_exhausted: 'error' });
      writeFiles(s.cwd, { '.mcp.json': JSON.stringify({ mcpServers: { t: { command: process.execPath, args: [TEST_SERVER] }, bad: { command: process.execPath, args: [TEST_SERVER, '--exit-on-start'] } } }) });
      const run = await s.navi(['doctor', '-o', 'json']);
      const report = JSON.parse(run.stdout) as { ok: boolean; checks: Array<{ name: string; ok: boolean; detail: string }> };
      const mcp = report.checks.find((c) => c.name === 'mcp');
      expect(mcp).toMatchObject({ ok: false, detail: expect.stringMatching(/^1 of 2 failed: bad: the server exited with code 2; its stderr is in .*bad\.log; ready: t \(10 tools, \d+ ms\)$/) as string });
      expect(run.code).toBe(1);
    }, SCENARIO_TIMEOUT_MS);
  });
});
