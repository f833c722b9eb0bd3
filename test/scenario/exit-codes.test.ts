/**
 * SPEC §4 exit codes with a one-line reason on stderr and never a stack trace: invalid input (2),
 * Ollama unavailable in each way it fails (75), max iterations (3); and the commands that must
 * open no database at all.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateEvent } from '../../src/agent/events.js';
import { cleanEnv, runNavi, stackLines, type NaviResult } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import type { FakeTurn } from '../support/fake-ollama.js';
import { LONG_SCENARIO_TIMEOUT_MS, SCENARIO_TIMEOUT_MS, describeRun, tempDir, eventsOf, expectValidStream, resultOf, scenario, writeFiles } from './helpers.js';

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Exit code, exactly one `navi: …` message on stderr (yargs' usage errors continue on a second
 * line) matching `pattern`, and no stack trace.
 */
function expectFailure(run: NaviResult, code: number, pattern: RegExp): void {
  expect(run.code, describeRun(run)).toBe(code);
  expect(stackLines(run.stderr), 'no stack trace on stderr').toEqual([]);
  const lines = run.stderr.split('\n').filter((l) => l.startsWith('navi: '));
  expect(lines, `one navi: line in ${run.stderr}`).toHaveLength(1);
  expect(run.stderr).toMatch(pattern);
}

/** The json output of a failed run: exactly one valid result object on stdout. */
function expectJsonResult(run: NaviResult, status: string, reason: string | RegExp): Record<string, unknown> {
  expect(run.lines, `stdout: ${run.stdout}`).toHaveLength(1);
  const result = JSON.parse(run.stdout) as Record<string, unknown>;
  expect(validateEvent(result)).toEqual([]);
  expect(result.type).toBe('result');
  expect(result.status).toBe(status);
  expect(result.exit_code).toBe(run.code);
  expect(result.reason).toMatch(reason);
  return result;
}

describe('invalid input (exit 2) before any database or model is touched', () => {
  /** A working directory and a data directory that must stay nonexistent. */
  function fixture(): { cwd: string; dataDir: string; env: Record<string, string> } {
    const cwd = tempDir('cwd');
    const dataDir = path.join(tempDir('nodb'), 'never-created');
    return { cwd, dataDir, env: cleanEnv({ NAVI_DATA_DIR: dataDir, OLLAMA_HOST: 'http://127.0.0.1:9' }) };
  }

  const cases: Array<{ name: string; args: string[]; files?: Record<string, string>; pattern: RegExp }> = [
    { name: 'an unknown flag', args: ['run', 'hello', '--bogus-flag'], pattern: /bogus-flag/ },
    { name: 'an unknown flag on a command that opens the database', args: ['sessions', 'list', '--bogus'], pattern: /bogus/ },
    { name: 'a bad --output value', args: ['run', '--output', 'yaml', 'hello'], pattern: /output.*yaml|yaml.*output/i },
    {
      name: 'invalid JSON in .nav-config.json (file:line:col)',
      args: ['run', 'hello'],
      files: { '.nav-config.json': '{\n  "llm": {\n    "model": "qwen3:8b",\n  }\n}\n' },
      pattern: /\.nav-config\.json:4:3: invalid JSON/,
    },
    {
      name: 'a bad config value (names the key and what is allowed)',
      args: ['run', 'hello'],
      files: { '.nav-config.json': JSON.stringify({ loop_mode: { max_iterations: 99 } }) },
      pattern: /\.nav-config\.json.*loop_mode\.max_iterations.*20/,
    },
    {
      name: 'a bad value in a --config file',
      args: ['run', '--config', 'conf/navi.json', 'hello'],
      files: { 'conf/navi.json': JSON.stringify({ llm: { num_ctx: 'lots' } }) },
      pattern: /conf\/navi\.json.*llm\.num_ctx/,
    },
    { name: 'a missing --config file', args: ['run', '--config', 'nope.json', 'hello'], pattern: /nope\.json.*not found/ },
    { name: '--max-iterations 0', args: ['run', '--max-iterations', '0', 'hello'], pattern: /max-iterations/ },
    { name: 'no prompt and an empty stdin', args: ['run'], pattern: /no prompt/ },
    { name: 'an unknown command', args: ['frobnicate'], pattern: /frobnicate/i },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const f = fixture();
      if (c.files) writeFiles(f.cwd, c.files);
      const run = await runNavi(c.args, { cwd: f.cwd, env: f.env });
      expectFailure(run, 2, c.pattern);
      expect(fs.existsSync(f.dataDir), 'no database was opened').toBe(false);
    }, SCENARIO_TIMEOUT_MS);
  }

  it('json mode: a config error is still exactly one result object on stdout', async () => {
    const f = fixture();
    writeFiles(f.cwd, { '.nav-config.json': '{"llm": {"think": "maybe"}}' });
    const run = await runNavi(['run', '-o', 'json', 'hello'], { cwd: f.cwd, env: f.env });
    expectFailure(run, 2, /llm\.think/);
    expectJsonResult(run, 'invalid_input', 'config_invalid');
  }, SCENARIO_TIMEOUT_MS);

  it('--version, --help and a bare `navi` exit 0 and open no database', async () => {
    const f = fixture();
    const version = await runNavi(['--version'], { cwd: f.cwd, env: f.env });
    expect(version.code, describeRun(version)).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    for (const args of [['--help'], ['run', '--help'], ['sessions', '--help'], []]) {
      const help = await runNavi(args, { cwd: f.cwd, env: f.env });
      expect(help.code, describeRun(help)).toBe(0);
      expect(help.stdout).toMatch(/navi/);
      expect(help.stderr).toBe('');
    }
    expect(fs.existsSync(f.dataDir)).toBe(false);
  }, LONG_SCENARIO_TIMEOUT_MS);
});

forEachBackend((backend) => {
  describe('Ollama unavailable (exit 75)', () => {
    it('unreachable host: one line naming the host, json result llm_unavailable, the prompt is saved', async () => {
      const s = await scenario(backend, { turns: [] });
      const port = await closedPort();
      const run = await s.navi(['run', '-o', 'json', '--ollama-host', `http://127.0.0.1:${port}`, 'hello there'], { host: false });
      expectFailure(run, 75, new RegExp(`cannot reach Ollama at http://127\\.0\\.0\\.1:${port}`));
      const result = expectJsonResult(run, 'llm_unavailable', 'ollama_unreachable');
      // Everything so far is saved: the session and the user's message.
      const sessionId = String(result.session_id);
      expect(sessionId).not.toBe('');
      const messages = await s.db.withStore((store) => store.messages.list(sessionId));
      expect(messages.map((m) => [m.role, m.content])).toEqual([['user', 'hello there']]);
    }, SCENARIO_TIMEOUT_MS);

    it('missing model: tells the user the `ollama pull` command', async () => {
      const s = await scenario(backend, { turns: [{ content: 'never served' }] });
      const run = await s.navi(['run', '--model', 'nosuch:1b', 'hello']);
      expectFailure(run, 75, /ollama pull nosuch:1b/);
      expect(run.stdout).toBe('');
      expect(s.fake.turnsServed).toBe(0);
    }, SCENARIO_TIMEOUT_MS);

    const streamFailures: Array<{ name: string; turn: FakeTurn; env?: Record<string, string>; reason: string; pattern: RegExp }> = [
      {
        name: 'a stream that stalls mid-answer (LLM_STREAM_CHUNK_TIMEOUT)',
        turn: { thinking: 'thinking for a while', content: 'partial answer', stall_after_chunks: 2 },
        env: { LLM_STREAM_CHUNK_TIMEOUT: '0.5' },
        reason: 'chunk_timeout',
        pattern: /no chunk within 0\.5 s/,
      },
      {
        name: 'a first chunk that never comes (LLM_STREAM_FIRST_CHUNK_TIMEOUT)',
        turn: { first_chunk_delay_ms: 15_000, content: 'too late' },
        env: { LLM_STREAM_FIRST_CHUNK_TIMEOUT: '0.5' },
        reason: 'first_chunk_timeout',
        pattern: /within 0\.5 s \(first chunk\)/,
      },
      {
        name: 'an {"error": …} line mid-stream',
        turn: { content: 'starting to answer', error_line: 'llama runner process has terminated', error_after_chunks: 1 },
        reason: 'ollama_error',
        pattern: /llama runner process has terminated/,
      },
      {
        name: 'a dropped connection',
        turn: { content: 'an answer that gets cut off', drop_after_chunks: 2 },
        reason: 'stream_incomplete',
        pattern: /ended the response.*before it was complete/,
      },
    ];

    for (const c of streamFailures) {
      it(c.name, async () => {
        const s = await scenario(backend, { turns: [c.turn] });
        const run = await s.navi(['run', '-o', 'stream-json', 'hello'], { env: c.env ?? {} });
        expectFailure(run, 75, c.pattern);
        const events = expectValidStream(run);
        expect(eventsOf(events, 'error')).toHaveLength(1);
        expect(resultOf(run)).toMatchObject({ status: 'llm_unavailable', exit_code: 75, reason: c.reason });
        // The stalled request was cut, not left hanging.
        const request = await s.fake.waitForClose(s.fake.requests.findIndex((r) => r.path === '/api/chat'), 3000);
        expect(request.closedAt).toBeDefined();
        expect(run.durationMs).toBeLessThan(10_000);
      }, SCENARIO_TIMEOUT_MS);
    }
  });

  describe('max iterations (exit 3)', () => {
    it('a model that always calls tools stops at --max-iterations with status incomplete', async () => {
      const call = { tool_calls: [{ name: 'list_dir', arguments: {} }] };
      const s = await scenario(backend, { turns: [call, call, call, call], on_exhausted: 'error' });
      const run = await s.navi(['run', '-o', 'stream-json', '--max-iterations', '2', 'loop forever']);
      expectFailure(run, 3, /max_iterations|max-iterations|iterations/);
      const events = expectValidStream(run);
      expect(eventsOf(events, 'tool_call')).toHaveLength(2);
      expect(eventsOf(events, 'stream_end')[0]).toMatchObject({ stop_reason: 'max_iterations', iterations: 2 });
      const result = resultOf(run);
      expect(result).toMatchObject({ status: 'incomplete', reason: 'max_iterations', exit_code: 3, iterations: 2, num_turns: 2 });
      expect(String((result.errors as string[])[0])).toContain(`navi run --session ${String(result.session_id)}`);
      expect(s.chats()).toHaveLength(2);
    }, SCENARIO_TIMEOUT_MS);
  });

  describe('invalid input that needs the database', () => {
    it('an unknown profile exits 2 naming the available ones', async () => {
      const s = await scenario(backend, { turns: [] });
      const run = await s.navi(['run', '--profile', 'nope', 'hello']);
      expectFailure(run, 2, /unknown profile 'nope'.*default/);
      expect(s.chats()).toHaveLength(0);
    }, SCENARIO_TIMEOUT_MS);

    it('an unknown --session exits 2', async () => {
      const s = await scenario(backend, { turns: [] });
      const run = await s.navi(['run', '-o', 'json', '--session', 'no-such-session', 'hello']);
      expectFailure(run, 2, /no session 'no-such-session'/);
      expectJsonResult(run, 'invalid_input', 'session_not_found');
      expect(s.chats()).toHaveLength(0);
    }, SCENARIO_TIMEOUT_MS);
  });
});
