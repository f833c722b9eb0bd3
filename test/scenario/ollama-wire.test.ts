/**
 * Today's Ollama (v0.33, llama-server underneath) through the built CLI (issue 17 points 1, 2,
 * 3, 6): a current parser's error is the model's mistake, asked again; a reply the server cut
 * off for repetition (a 200 body without `done`) too, while a dropped connection stays exit 75;
 * every chat says `truncate: false`, and a prompt too large for the loaded context ends with
 * both sizes named and exit 1, never 75; any other 4xx is exit 2 with Ollama's reason.
 */
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import type { FakeTurn } from '../support/fake-ollama.js';
import {
  SCENARIO_TIMEOUT_MS,
  describeRun,
  eventsOf,
  expectFailure,
  expectJsonResult,
  expectValidStream,
  requestMessages,
  resultOf,
  scenario,
} from './helpers.js';

const MISTAKES: Array<{ parser: string; turn: FakeTurn; text: RegExp }> = [
  {
    parser: 'qwen3-coder / qwen3.5 (qwen3coder.go: raw encoding/xml error)',
    turn: { thinking: 'I will read it.', tool_parse_error: '<function=read_file>\n<parameter=path>\nnotes.txt', tool_parse_error_parser: 'qwen3coder' },
    text: /XML syntax error on line 3: unexpected EOF/,
  },
  {
    parser: 'GLM-4.6/4.7 (glm46.go)',
    turn: { content: 'Reading.', error_line: 'tool "read_fil" is not declared' },
    text: /tool "read_fil" is not declared/,
  },
  {
    parser: 'laguna (laguna.go), as the 500 before any line',
    turn: { tool_parse_error: '{"name": "read_file", "arguments": {', tool_parse_error_parser: 'laguna', tool_parse_error_http: true },
    text: /failed to parse Laguna JSON tool call: unexpected end of JSON input/,
  },
];

forEachBackend((backend) => {
  describe('today’s Ollama: model mistakes, overflow, refusals', () => {
    for (const m of MISTAKES) {
      it(`a ${m.parser} parser error once, then a good reply: exit 0 with a warning`, async () => {
        const s = await scenario(backend, { turns: [m.turn, { content: 'All done.' }], on_exhausted: 'error' });
        const run = await s.navi(['run', '-o', 'stream-json', 'read notes.txt']);
        expect(run.code, describeRun(run)).toBe(0);
        const events = expectValidStream(run);
        const warnings = eventsOf(events, 'warning');
        expect(warnings.map((w) => w.code)).toEqual(['malformed_tool_call']);
        expect(String(warnings[0]?.message)).toMatch(m.text);
        expect(String(warnings[0]?.message)).toContain('asking again (retry 1 of 2)');
        expect(resultOf(run)).toMatchObject({ status: 'success', exit_code: 0, result: 'All done.' });
        expect(s.chats()).toHaveLength(2);
        // The retry tells the model what went wrong.
        expect(JSON.stringify(requestMessages(s.chats()[1]))).toContain('could not be parsed');
      }, SCENARIO_TIMEOUT_MS);
    }

    it('a reply the server cut off (200 body, no done: the repeat-token abort) is asked again with a warning, exit 0', async () => {
      const s = await scenario(backend, {
        turns: [{ thinking: 'hmm', content: 'the the the the the the', no_done: true }, { content: 'Answer, once.' }],
        on_exhausted: 'error',
      });
      const run = await s.navi(['run', '-o', 'stream-json', 'say it once']);
      expect(run.code, describeRun(run)).toBe(0);
      const events = expectValidStream(run);
      const warnings = eventsOf(events, 'warning');
      expect(warnings.map((w) => w.code)).toEqual(['reply_cut_off']);
      expect(String(warnings[0]?.message)).toMatch(/without finishing it .*asking again/);
      expect(resultOf(run)).toMatchObject({ status: 'success', result: 'Answer, once.' });
      expect(JSON.stringify(requestMessages(s.chats()[1]))).toContain('kept repeating');
    }, SCENARIO_TIMEOUT_MS);

    it('a reply cut off three times in a row ends exit 1 model_error, not 75', async () => {
      const cut: FakeTurn = { content: 'again and again', no_done: true };
      const s = await scenario(backend, { turns: [cut, cut, cut], on_exhausted: 'error' });
      const run = await s.navi(['run', '-o', 'json', 'loop']);
      expectFailure(run, 1, /3 times in a row; the model keeps looping/);
      expectJsonResult(run, 'error', 'model_error');
    }, SCENARIO_TIMEOUT_MS);

    it('every chat says truncate:false; a prompt larger than the loaded context ends exit 1 naming both sizes', async () => {
      // /api/show does not say the model's context (a server older than model_info), so navi
      // budgets with num_ctx 65536; the server clamps it to the model's 1024 (llm/server.go
      // 111-117), and the request is larger than that.
      const s = await scenario(backend, { models: [{ name: 'qwen3:8b', trained_context: 1024 }], turns: [{ content: 'never' }], on_exhausted: 'error' });
      const run = await s.navi(['run', '-o', 'json', 'hello'], { env: { OLLAMA_NUM_CTX: '65536' } });
      // Nothing to compress in a first request: the turn ends context_too_large (turn-wire.test.ts has the rest).
      expectFailure(run, 1, /The conversation \(\d+ tokens\) does not fit the context of 1024 tokens Ollama loaded for qwen3:8b/);
      expect(run.stderr).not.toContain('{"error"');
      const result = expectJsonResult(run, 'error', 'context_too_large');
      expect(result.exit_code).toBe(1);
      expect(s.chats()).toHaveLength(1);
      expect(s.chats()[0]?.body?.truncate).toBe(false);
      expect(s.fake.turnsServed).toBe(0);
    }, SCENARIO_TIMEOUT_MS);

    it.each([
      ['option "num_ctx" must be of type integer'],
      ['"qwen3:8b" does not support chat'],
      ['invalid think value: "extreme" (must be "high", "medium", "low", "max", true, or false)'],
    ])('HTTP 400 %s: exit 2 with Ollama’s reason, never 75', async (message) => {
      const s = await scenario(backend, { turns: [{ http_status: 400, error_message: message }], on_exhausted: 'error' });
      const run = await s.navi(['run', '-o', 'json', 'hello']);
      expectFailure(run, 2, /refused the request for model qwen3:8b \(HTTP 400\)/);
      expect(run.stderr).toContain(message);
      expectJsonResult(run, 'invalid_input', 'ollama_rejected');
    }, SCENARIO_TIMEOUT_MS);
  });
});
