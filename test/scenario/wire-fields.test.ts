/**
 * What navi sends Ollama besides the messages (issue 17, points 8, 9 and 12), end to end: the
 * built CLI against the fake over real HTTP.
 *  - Tool call ids go back with the calls (api/types.go 221-230 `ToolCall.ID`; the server gives
 *    every call `call_` + 8 characters, server/routes.go toolCallId).
 *  - `llm.think` takes an effort level; the helper calls send "low" on gpt-oss, which ignores
 *    `think: false` (docs/capabilities/thinking.mdx), and `false` elsewhere.
 *  - The summariser call carries the run's `keep_alive` (sched.go 512-515: without it a call
 *    that loads the model loads it for 5 minutes).
 *  - MCP tool names survive gpt-oss's harmony renaming (harmony/harmonyparser.go 509-535).
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import type { FakeModel, FakeScript, RecordedRequest } from '../support/fake-ollama.js';
import { SCENARIO_TIMEOUT_MS, describeRun, expectFailure, requestMessages, scenario, writeFiles } from './helpers.js';

const TEST_SERVER = path.join(REPO_ROOT, 'test', 'support', 'mcp-test-server.js');

const MODELS: FakeModel[] = [
  { name: 'qwen3:8b', context_length: 40960 },
  // details.family "gptoss", as the real gpt-oss reports it (the fake derives it from the name).
  { name: 'gpt-oss:20b', context_length: 131072 },
];

const analysis = ['TASK: Check it', 'GOAL: checked', 'UNKNOWNS: none', 'RESOURCES: a.txt', 'KNOWLEDGE RULES: none', 'COMPLEXITY: simple', 'SUBTASKS: read', 'COMMITMENTS: none'].join('\n');

/** A plan tool call: two planner calls (analysis, execution plan), then the answer. */
const PLAN_SCRIPT: FakeScript = {
  models: MODELS,
  turns: [
    { tool_calls: [{ name: 'plan', arguments: {} }] },
    { content: analysis },
    { content: '1. Read a.txt — TOOL: read_file' },
    { content: 'Planned.' },
  ],
  on_exhausted: 'error',
};

/** The planner's requests: no tools offered, a system prompt of its own. */
function helperCalls(chats: RecordedRequest[]): RecordedRequest[] {
  return chats.filter((r) => !Array.isArray(r.body?.tools) || (r.body.tools as unknown[]).length === 0);
}

forEachBackend(
  (backend) => {
    describe('wire fields', () => {
      it('tool call ids the server gave go back with the calls', async () => {
        const s = await scenario(backend, {
          models: MODELS,
          tool_call_ids: true,
          turns: [{ tool_calls: [{ name: 'list_dir', arguments: {} }, { name: 'read_file', arguments: { path: 'a.txt' } }] }, { content: 'Done.' }],
          on_exhausted: 'error',
        });
        writeFiles(s.cwd, { 'a.txt': 'alpha\n' });
        const run = await s.navi(['run', '-o', 'json', 'Look around']);
        expect(run.code, describeRun(run)).toBe(0);
        const second = requestMessages(s.chats()[1]);
        const assistant = second.find((m) => m.role === 'assistant');
        const calls = assistant?.tool_calls as Array<{ id?: string; function: { name: string } }>;
        expect(calls.map((c) => c.function.name)).toEqual(['list_dir', 'read_file']);
        for (const call of calls) expect(call.id).toMatch(/^call_[a-z0-9]{8}$/);
        expect(new Set(calls.map((c) => c.id)).size).toBe(2);
      }, SCENARIO_TIMEOUT_MS);

      it('llm.think takes an effort level; anything else is exit 2 naming the key and the values', async () => {
        const s = await scenario(backend, { models: MODELS, turns: [{ content: 'Hi.' }], on_exhausted: 'error' });
        writeFiles(s.cwd, { '.nav-config.json': JSON.stringify({ llm: { think: 'high' } }) });
        const run = await s.navi(['run', '-o', 'json', 'Hello']);
        expect(run.code, describeRun(run)).toBe(0);
        // The main calls ask for thinking (the level itself once the turn passes it on).
        expect(s.chats()[0]?.body?.think).not.toBe(false);

        writeFiles(s.cwd, { '.nav-config.json': JSON.stringify({ llm: { think: 'max' } }) });
        expectFailure(await s.navi(['run', 'Hello']), 2, /llm\.think: must be true, false, or one of "low", "medium", "high"/);
      }, SCENARIO_TIMEOUT_MS);

      it.each<[string, false | 'low']>([
        ['qwen3:8b', false],
        ['gpt-oss:20b', 'low'],
      ])('the planner on %s sends think %j', async (model, think) => {
        const s = await scenario(backend, PLAN_SCRIPT);
        writeFiles(s.cwd, { 'a.txt': 'alpha\n' });
        const run = await s.navi(['run', '-o', 'json', '--model', model, 'Check it: plan it']);
        expect(run.code, describeRun(run)).toBe(0);
        const helpers = helperCalls(s.chats());
        expect(helpers).toHaveLength(2);
        for (const r of helpers) expect(r.body?.think).toBe(think);
        // The fake refuses what the server refuses: a level it accepted is a level Ollama takes.
        expect(s.fake.mismatches).toEqual([]);
      }, SCENARIO_TIMEOUT_MS);

      it("the summariser call carries the run's keep_alive", async () => {
        const turns: FakeScript['turns'] = [];
        for (let i = 0; i < 8; i++) turns.push({ tool_calls: [{ name: 'list_dir', arguments: {} }] });
        turns.push({ content: 'Listed.' }, { content: 'Summary: listed the directory eight times.' });
        const s = await scenario(backend, { models: MODELS, turns, on_exhausted: 'error' });
        writeFiles(s.cwd, { '.nav-config.json': JSON.stringify({ llm: { keep_alive: '2h' } }) });
        const run = await s.navi(['run', '-o', 'json', 'List the directory eight times']);
        expect(run.code, describeRun(run)).toBe(0);
        const session = String(run.events.at(-1)?.session_id);
        const compact = await s.navi(['sessions', 'compact', session]);
        expect(compact.code, describeRun(compact)).toBe(0);
        const summariser = s.chats().at(-1);
        expect(summariser?.turn).toBe(turns.length - 1);
        expect(summariser?.body?.keep_alive).toBe('2h');
        expect(summariser?.body?.think).toBe(false);
      }, SCENARIO_TIMEOUT_MS);

      it('MCP tool names are letters, digits and _ only (harmony keeps them), and calls reach the server by its own names', async () => {
        const s = await scenario(backend, {
          models: MODELS,
          turns: [{ tool_calls: [{ name: 'mcp__test_srv__echo', arguments: { text: 'through the dash' } }] }, { content: 'Echoed.' }],
          on_exhausted: 'error',
        });
        writeFiles(s.cwd, { '.mcp.json': JSON.stringify({ mcpServers: { 'test-srv': { command: process.execPath, args: [TEST_SERVER, '--tools', '0'] } } }) });
        const run = await s.navi(['run', '-o', 'json', '--model', 'gpt-oss:20b', 'Echo it']);
        expect(run.code, describeRun(run)).toBe(0);
        const offered = ((s.chats()[0]?.body?.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name).filter((n) => n.startsWith('mcp__'));
        expect(offered).toContain('mcp__test_srv__echo');
        for (const name of offered) expect(name).toMatch(/^[A-Za-z0-9_]+$/);
        const result = requestMessages(s.chats()[1]).find((m) => m.role === 'tool');
        expect(result).toMatchObject({ tool_name: 'mcp__test_srv__echo' });
        expect(String(result?.content)).toContain('through the dash');
      }, SCENARIO_TIMEOUT_MS);
    });
  },
);
