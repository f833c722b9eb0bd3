/**
 * Issue 18 items 9, 12 and 21, as a user meets them with the built CLI against the fake Ollama:
 * a sentence is a prompt; a broken project profile nobody uses blocks nothing and `-p nope` says
 * "unknown profile"; the flags people bring from claude -p / codex exec / gemini -p work where
 * navi has the feature. What only parses — a lone bare word is not a prompt (`navi status`: exit
 * 2), `navi version` prints the version, the flags navi does not have are exit 2 with what navi
 * does instead — runs in process: test/unit/cli-parsing.unit.test.ts.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import type { FakeScript } from '../support/fake-ollama.js';
import { SCENARIO_TIMEOUT_MS, describeRun, expectFailure, expectValidStream, requestMessages, resultOf, scenario, writeFiles, type Scenario } from './helpers.js';

const ANSWER: FakeScript = { turns: [{ content: 'Done.' }, { content: 'Again.' }], on_exhausted: 'error' };
const TEST_SERVER = path.join(REPO_ROOT, 'test', 'support', 'mcp-test-server.js');

function systemOf(s: Scenario, i: number): string {
  return String(requestMessages(s.chats()[i]).find((m) => m.role === 'system')?.content);
}

function bodyOf(s: Scenario, i: number): Record<string, unknown> {
  return s.chats()[i]?.body ?? {};
}

forEachBackend((backend) => {
  describe('a lone bare word (issue 18 item 9)', () => {
    it('a sentence is still a prompt: navi "show me the status" runs it', async () => {
      const s = await scenario(backend, ANSWER);
      const prompt = await s.navi(['show me the status']);
      expect(prompt.code, describeRun(prompt)).toBe(0);
      expect(prompt.stdout).toBe('Done.\n');
    }, SCENARIO_TIMEOUT_MS);
  });

  describe('broken project profiles (issue 18 item 12)', () => {
    it('a broken profile nobody uses blocks nothing; using it is exit 2 naming its file; -p nope is "unknown profile"; profiles list flags it', async () => {
      const s = await scenario(backend, ANSWER);
      writeFiles(s.cwd, { 'profiles/broken/config.json': '{ "description": ', 'profiles/broken/system_prompt.txt': 'Be broken.\n' });
      const run = await s.navi(['run', 'say something']);
      expect(run.code, describeRun(run)).toBe(0);
      expect(run.stdout).toBe('Done.\n');
      const used = await s.navi(['run', '-p', 'broken', 'say something']);
      expectFailure(used, 2, /profile 'broken' cannot be used: profiles\/broken\/config\.json/);
      const unknown = await s.navi(['run', '-p', 'nope', 'say something']);
      expectFailure(unknown, 2, /unknown profile 'nope'/);
      expect(unknown.stderr).not.toContain('broken/config.json');
      const list = await s.navi(['profiles', 'list']);
      expect(list.code, describeRun(list)).toBe(0);
      expect(list.stdout).toMatch(/^! broken +project +broken: profiles\/broken\/config\.json/m);
      const json = await s.navi(['profiles', 'list', '-o', 'json']);
      const profiles = (JSON.parse(json.stdout) as { profiles: Array<Record<string, unknown>> }).profiles;
      const broken = profiles.find((p) => p.id === 'broken');
      expect(broken?.valid).toBe(false);
      expect(String(broken?.problem)).toContain('profiles/broken/config.json');
      expect(s.chats()).toHaveLength(1);
    }, SCENARIO_TIMEOUT_MS);
  });

  describe('flags from claude -p, codex exec, gemini -p (issue 18 item 21)', () => {
    it('--think LEVEL, --temperature, --num-ctx reach the request; --no-think turns reasoning off', async () => {
      const s = await scenario(backend, ANSWER);
      const run = await s.navi(['run', '--think', 'high', '--temperature', '0.3', '--num-ctx', '4096', 'say something']);
      expect(run.code, describeRun(run)).toBe(0);
      const body = bodyOf(s, 0);
      expect(body.think).toBe('high');
      expect(body.options).toMatchObject({ temperature: 0.3, num_ctx: 4096 });
      const off = await s.navi(['run', '--no-think', 'say something else']);
      expect(off.code, describeRun(off)).toBe(0);
      expect(bodyOf(s, 1).think).toBe(false);
      const bad = await s.navi(['run', '--think', 'max', 'x y']);
      expectFailure(bad, 2, /--think takes low, medium, high \(or --no-think for none\); got 'max'/);
      const hot = await s.navi(['run', '--temperature', '7', 'x y']);
      expectFailure(hot, 2, /--temperature/);
      expect(s.chats()).toHaveLength(2);
    }, SCENARIO_TIMEOUT_MS);

    it("--system-prompt replaces the profile's prompt (the persona stays); --json is -o stream-json; -r/--resume continues a session", async () => {
      const s = await scenario(backend, ANSWER);
      const run = await s.navi(['run', '--json', '--system-prompt', 'You answer in one word.', 'say something']);
      expect(run.code, describeRun(run)).toBe(0);
      const events = expectValidStream(run);
      const system = systemOf(s, 0);
      expect(system).toContain('You answer in one word.');
      expect(system).not.toContain('You are a general-purpose agent');
      const sessionId = String(events.at(-1)?.session_id);
      const again = await s.navi(['run', '-o', 'json', '-r', sessionId, 'and again']);
      expect(again.code, describeRun(again)).toBe(0);
      expect(resultOf(again)).toMatchObject({ session_id: sessionId, result: 'Again.' });
      expect(requestMessages(s.chats()[1]).map((m) => m.content)).toContain('say something');
    }, SCENARIO_TIMEOUT_MS);

    it('--mcp-config FILE adds its servers; --add-dir inside --cwd is accepted, outside it is exit 2; --verbose with --quiet is exit 2', async () => {
      const s = await scenario(backend, ANSWER);
      writeFiles(s.cwd, { 'extra-mcp.json': JSON.stringify({ mcpServers: { t: { command: process.execPath, args: [TEST_SERVER] } } }), 'sub/a.txt': 'a' });
      const run = await s.navi(['run', '--mcp-config', 'extra-mcp.json', '--add-dir', 'sub', '--verbose', 'say something']);
      expect(run.code, describeRun(run)).toBe(0);
      const tools = ((bodyOf(s, 0).tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name);
      expect(tools).toContain('mcp__t__echo');
      const outside = await s.navi(['run', '--add-dir', '..', 'x y']);
      expectFailure(outside, 2, /--add-dir \.\.: navi's file tools work inside one directory/);
      const both = await s.navi(['run', '--verbose', '-q', 'x y']);
      expectFailure(both, 2, /--verbose and --quiet/);
      const missing = await s.navi(['run', '--mcp-config', 'nope.json', 'x y']);
      expectFailure(missing, 2, /--mcp-config nope\.json/);
      expect(s.chats()).toHaveLength(1);
    }, SCENARIO_TIMEOUT_MS);

    it('--timeout stops a one-shot whose model does not answer in time: exit 5, reason timeout, the session kept', async () => {
      const s = await scenario(backend, { turns: [{ content: 'late', first_chunk_delay_ms: 60_000 }], on_exhausted: 'error' });
      const run = await s.navi(['run', '-o', 'json', '--timeout', '1s', 'say something']);
      expect(run.code, describeRun(run)).toBe(5);
      const result = resultOf(run);
      expect(result).toMatchObject({ status: 'budget_exhausted', reason: 'timeout' });
      expect(String((result.errors as string[])[0])).toMatch(/stopped at --timeout 1s; .* navi run --session /);
      const bad = await s.navi(['run', '--timeout', 'soon', 'x y']);
      expectFailure(bad, 2, /--timeout/);
    }, SCENARIO_TIMEOUT_MS);

    it('loop --clarify without --resume is exit 2 before the model is called', async () => {
      const s = await scenario(backend, ANSWER);
      const clarify = await s.navi(['loop', '--clarify', 'use tabs', 'make the tests pass']);
      expectFailure(clarify, 2, /--clarify only applies with --resume/);
      expect(s.chats()).toHaveLength(0);
    }, SCENARIO_TIMEOUT_MS);
  });
});
