/**
 * The context navi budgets with is the one the server has (issue 17 point 4), and a prompt
 * larger than it is refused before anything is stored (issue 18 item 15).
 *
 * Ollama clamps a num_ctx above the GGUF's trained context with only a log line (llm/server.go
 * 111-117, server/sched.go 149-167 `effectiveContext`; audit D4): the fake reports the model's
 * `context_length` from /api/show as the server does (test/support/fake-ollama.ts `show`).
 */
import { describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import { describeRun, SCENARIO_TIMEOUT_MS, scenario } from './helpers.js';

const MODEL = { name: 'qwen3:8b', context_length: 40960, capabilities: ['completion', 'tools'] };

describe('context budget', () => {
  assertBuilt();
  forEachBackend((backend) => {
    it('an explicit num_ctx above the model context is lowered to it (the server clamps it), with a warning', async () => {
      const s = await scenario(backend, { models: [MODEL], turns: [{ content: 'Hi.' }], on_exhausted: 'error' });
      const run = await s.navi(['run', '-o', 'stream-json', '--model', MODEL.name, 'hello'], { env: { OLLAMA_NUM_CTX: '131072' } });
      expect(run.code, describeRun(run)).toBe(0);
      expect(run.events.find((e) => e.type === 'model_info')).toMatchObject({ num_ctx: 40960, context_length: 40960 });
      expect((s.chats()[0]?.body?.options as Record<string, unknown> | undefined)?.num_ctx).toBe(40960);
      const warning = run.events.find((e) => e.type === 'warning' && e.code === 'num_ctx_exceeds_model');
      expect(String(warning?.message)).toMatch(/131072 exceeds .*40960; using 40960/);
    }, SCENARIO_TIMEOUT_MS);

    it('a 10 MB prompt is refused before any write or model call: exit 2, the sizes and the fix, no session stored', async () => {
      const s = await scenario(backend, { models: [MODEL], turns: [{ content: 'never' }], on_exhausted: 'error' });
      const prompt = 'lorem ipsum dolor sit amet '.repeat(400_000); // ~10.8 MB
      const run = await s.navi(['run', '-o', 'json', '--model', MODEL.name], { stdin: prompt });
      expect(run.code, describeRun(run)).toBe(2);
      const result = run.events.at(-1);
      expect(result).toMatchObject({ type: 'result', status: 'invalid_input', reason: 'prompt_too_large', exit_code: 2 });
      expect(run.stderr).toMatch(/does not fit the model's context window \(about \d+ tokens; num_ctx 40960, model context 40960\)\. Shorten it/);
      expect(run.stderr).not.toMatch(/no longer fits/);
      expect(s.chats()).toHaveLength(0);
      const list = await s.navi(['sessions', 'list', '-o', 'json']);
      expect(list.code, describeRun(list)).toBe(0);
      expect((JSON.parse(list.stdout) as { sessions: unknown[] }).sessions).toEqual([]);
    }, SCENARIO_TIMEOUT_MS);
  });
});
