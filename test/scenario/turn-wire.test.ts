/**
 * The turn's side of issue 17 points 3 and 8, through the built CLI against the fake Ollama:
 * a prompt the server refuses for size (navi sends `truncate: false`) is compressed and asked
 * again; a server that truncates anyway is named in a warning; tool results carry the id of
 * the call they answer, in the store and (with the wire mapping) in every later request.
 */
import { describe, expect, it } from 'vitest';
import { toOllamaRequest } from '../../src/llm/ollama-mapping.js';
import { forEachBackend, type Backend } from '../support/databases.js';
import type { FakeScript, FakeTurn } from '../support/fake-ollama.js';
import {
  LONG_SCENARIO_TIMEOUT_MS,
  SCENARIO_TIMEOUT_MS,
  describeRun,
  eventsOf,
  expectValidStream,
  requestMessages,
  resultOf,
  scenario,
  writeFiles,
  type Scenario,
} from './helpers.js';

/** The fake counts a prompt as ceil(request bytes / 4) tokens (fake-ollama-context.ts). */
function fakeTokens(bytes: number): number {
  return Math.ceil(bytes / 4);
}

const FILES = { 'a.txt': `${'alpha '.repeat(400)}\n`, 'b.txt': `${'bravo '.repeat(400)}\n`, 'c.txt': `${'charlie '.repeat(300)}\n` };
const READS: FakeTurn[] = [
  { tool_calls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] },
  { tool_calls: [{ name: 'read_file', arguments: { path: 'b.txt' } }] },
  { tool_calls: [{ name: 'read_file', arguments: { path: 'c.txt' } }] },
];

/**
 * Runs `script` once against a model with a window far larger than needed and returns each
 * chat request's size as the fake counts it: the sizes the real run will have, whatever the
 * system prompt and tool schemas weigh today.
 */
async function measure(backend: Backend, script: FakeScript, prompt: string): Promise<number[]> {
  const probe = await scenario(backend, { ...script, models: [{ name: 'qwen3:8b', trained_context: 262144 }] });
  writeFiles(probe.cwd, FILES);
  const run = await probe.navi(['run', '-o', 'json', prompt], { env: { OLLAMA_NUM_CTX: '65536' } });
  expect(run.code, describeRun(run)).toBe(0);
  return probe.chats().map((c) => fakeTokens(c.bytes));
}

function warningCodes(events: ReturnType<typeof expectValidStream>): string[] {
  return eventsOf(events, 'warning')
    .map((w) => String(w.code))
    .filter((c) => c !== 'num_ctx_exceeds_model');
}

/** True once the wire mapping sends `tool_call_id` (branch wire-fields): the request half of point 8. */
const WIRE_SENDS_TOOL_CALL_ID = JSON.stringify(toOllamaRequest({ model: 'm', messages: [{ role: 'tool', content: 'x', tool_call_id: 'call_1' }], think: false, numCtx: 1, signal: new AbortController().signal })).includes('tool_call_id');

forEachBackend((backend) => {
  describe('the turn on today’s Ollama: overflow, silent truncation, tool call ids', () => {
    it('a prompt the server refuses for size is compressed and asked again: exit 0, a context_overflow warning', async () => {
      const script: FakeScript = { turns: [...READS, { content: 'Summary: read a.txt, b.txt and c.txt.' }, { content: 'Done.' }], on_exhausted: 'error' };
      const prompt = 'Read a.txt, b.txt and c.txt, then say done.';
      // Probe: the 4th call is the one after the three reads.
      const sizes = await measure(backend, { turns: [...READS, { content: 'Done.' }], on_exhausted: 'error' }, prompt);
      expect(sizes).toHaveLength(4);
      const [, , third, fourth] = sizes as [number, number, number, number];
      // Room for the first three calls, not the fourth (num_ctx 65536 is clamped to it: llm/server.go 111-117).
      const window = Math.floor((third + fourth) / 2);
      const s = await scenario(backend, { ...script, models: [{ name: 'qwen3:8b', trained_context: window }] });
      writeFiles(s.cwd, FILES);
      const run = await s.navi(['run', '-o', 'stream-json', prompt], { env: { OLLAMA_NUM_CTX: '65536' } });
      expect(run.code, describeRun(run)).toBe(0);
      const events = expectValidStream(run);
      expect(warningCodes(events)).toEqual(['context_overflow']);
      const warning = eventsOf(events, 'warning').find((w) => w.code === 'context_overflow');
      expect(String(warning?.message)).toContain(`larger than the context of ${window} tokens it loaded for qwen3:8b`);
      // The compression measured the refused prompt as the server counted it, then the retry fit.
      expect(eventsOf(events, 'compression_started')).toMatchObject([{ reason: 'midturn', estimated_tokens: fourth }]);
      expect(eventsOf(events, 'context_compressed')).toHaveLength(1);
      expect(resultOf(run)).toMatchObject({ status: 'success', result: 'Done.' });
      const chats = s.chats();
      // Three reads, the refused call, the summariser, the retry.
      expect(chats).toHaveLength(6);
      expect(chats.every((c) => c.body?.truncate === false)).toBe(true);
      expect(fakeTokens(chats[5]?.bytes ?? 0)).toBeLessThanOrEqual(window);
      expect((chats[5]?.body?.options as { num_ctx?: number }).num_ctx).toBe(65536);
    }, LONG_SCENARIO_TIMEOUT_MS);

    it('a refusal that names no sizes (context shift off: "the prompt is longer…") takes the context from /api/ps', async () => {
      const prompt = 'Read a.txt, b.txt and c.txt, then say done.';
      const sizes = await measure(backend, { turns: [...READS, { content: 'Done.' }], on_exhausted: 'error' }, prompt);
      const [, , , fourth] = sizes as [number, number, number, number];
      // llm/llama_server.go 295-300: raised when context shift is off (the deepseek2 family,
      // sched.go 137-147) for a prompt that fits the window but leaves no room to generate. The
      // window holds the 4th request (so the fake's own size check lets it through to this answer).
      const LONGER =
        'the prompt is longer than the context length currently available to the model; shorten the prompt, adjust the context length in settings, or use a model with a longer context length';
      const window = fourth + 50;
      const s = await scenario(backend, {
        models: [{ name: 'qwen3:8b', trained_context: window }],
        turns: [...READS, { http_status: 400, error_message: LONGER }, { content: 'Summary: read the three files.' }, { content: 'Done.' }],
        on_exhausted: 'error',
      });
      writeFiles(s.cwd, FILES);
      const run = await s.navi(['run', '-o', 'stream-json', prompt], { env: { OLLAMA_NUM_CTX: '65536' } });
      expect(run.code, describeRun(run)).toBe(0);
      const events = expectValidStream(run);
      expect(warningCodes(events)).toEqual(['context_overflow']);
      expect(String(eventsOf(events, 'warning').find((w) => w.code === 'context_overflow')?.message)).toContain(`larger than the context of ${window} tokens`);
      // No size in the text: the estimate restarts just past the window /api/ps reported.
      expect(eventsOf(events, 'compression_started')).toMatchObject([{ reason: 'midturn', estimated_tokens: window + 1 }]);
      expect(s.fake.requests.some((r) => r.path === '/api/ps')).toBe(true);
      expect(resultOf(run)).toMatchObject({ status: 'success', result: 'Done.' });
    }, LONG_SCENARIO_TIMEOUT_MS);

    it('a prompt that cannot be made to fit ends context_too_large (exit 1) naming both sizes and the fix', async () => {
      const s = await scenario(backend, { models: [{ name: 'qwen3:8b', trained_context: 1024 }], turns: [{ content: 'never' }], on_exhausted: 'error' });
      const run = await s.navi(['run', '-o', 'json', 'hello'], { env: { OLLAMA_NUM_CTX: '65536' } });
      expect(run.code, describeRun(run)).toBe(1);
      expect(run.stderr).toMatch(/\(\d+ tokens\) does not fit the context of 1024 tokens Ollama loaded for qwen3:8b \(navi asked for num_ctx 65536\); nothing in it could be compressed/);
      expect(run.stderr).toMatch(/Start a new session with a shorter task, or use a model \(or llm.num_ctx\) with a larger context/);
      expect(resultOf(run)).toMatchObject({ status: 'error', exit_code: 1 });
      expect(s.chats()).toHaveLength(1);
    }, SCENARIO_TIMEOUT_MS);

    it('a server that truncates silently (an Ollama without truncate) is named in a context_truncated_by_server warning', async () => {
      // A long task: the first message the server drops, so the count falls although the history grew.
      const prompt = `Read a.txt and report.\n${'Background: '.repeat(700)}`;
      const turns: FakeTurn[] = [READS[0] as FakeTurn, { content: 'Done.' }];
      const [first] = (await measure(backend, { turns, on_exhausted: 'error' }, prompt)) as [number];
      const s = await scenario(backend, { turns, on_exhausted: 'error', ignores_truncate: true, models: [{ name: 'qwen3:8b', trained_context: first + 200 }] });
      writeFiles(s.cwd, FILES);
      const run = await s.navi(['run', '-o', 'stream-json', prompt], { env: { OLLAMA_NUM_CTX: '65536' } });
      expect(run.code, describeRun(run)).toBe(0);
      const events = expectValidStream(run);
      expect(warningCodes(events)).toEqual(['context_truncated_by_server']);
      const message = String(eventsOf(events, 'warning').find((w) => w.code === 'context_truncated_by_server')?.message);
      expect(message).toMatch(new RegExp(`counted \\d+ tokens, down from ${first} although the conversation only grew`));
      expect(message).toContain('upgrade Ollama, or lower llm.num_ctx');
      expect(resultOf(run)).toMatchObject({ status: 'success', result: 'Done.' });
    }, LONG_SCENARIO_TIMEOUT_MS);

    describe('tool results carry the id of the call they answer', () => {
      const script: FakeScript = {
        tool_call_ids: true,
        turns: [
          { tool_calls: [{ name: 'read_file', arguments: { path: 'a.txt' } }, { name: 'list_dir', arguments: {} }] },
          { tool_calls: [{ name: 'read_file', arguments: { path: 'b.txt' }, id: '' }] },
          { content: 'Done.' },
          { content: 'Still done.' },
        ],
        on_exhausted: 'error',
      };

      async function run(s: Scenario): Promise<string> {
        writeFiles(s.cwd, FILES);
        const first = await s.navi(['run', '-o', 'json', 'Read a.txt and b.txt']);
        expect(first.code, describeRun(first)).toBe(0);
        return String(resultOf(first).session_id);
      }

      it('in the stored context: the model’s ids, or navi’s call_<iteration>_<n> when it gave none', async () => {
        const s = await scenario(backend, script);
        const sessionId = await run(s);
        const context = await s.db.withStore((store) => store.context.load(sessionId));
        const pairs: Array<[string | undefined, string | undefined]> = [];
        for (const [i, m] of context.entries()) {
          if (m.role !== 'assistant' || !m.tool_calls) continue;
          m.tool_calls.forEach((call, n) => pairs.push([call.id, context[i + 1 + n]?.tool_call_id]));
        }
        expect(pairs).toHaveLength(3);
        for (const [callId, resultId] of pairs) expect(resultId).toBe(callId);
        expect(pairs[0]?.[0]).toMatch(/^call_[a-z0-9]{8}$/);
        expect(pairs[1]?.[0]).toMatch(/^call_[a-z0-9]{8}$/);
        // The second turn's call came without an id: navi's own, deterministic, so a replay is byte-stable.
        expect(pairs[2]?.[0]).toBe('call_2_0');
      }, SCENARIO_TIMEOUT_MS);

      it.skipIf(!WIRE_SENDS_TOOL_CALL_ID)('on the wire: every later request, and a continued session replays them byte for byte', async () => {
        const s = await scenario(backend, script);
        const sessionId = await run(s);
        const third = requestMessages(s.chats()[2]);
        const results = third.filter((m) => m.role === 'tool');
        const calls = third.flatMap((m) => (m.role === 'assistant' ? ((m.tool_calls as Array<{ id?: string }> | undefined) ?? []) : []));
        expect(results.map((m) => m.tool_call_id)).toEqual(calls.map((c) => c.id));
        const next = await s.navi(['run', '-o', 'json', '--session', sessionId, 'again']);
        expect(next.code, describeRun(next)).toBe(0);
        const resumed = requestMessages(s.chats()[3]);
        const replayed = resumed.filter((m) => m.role === 'tool' || m.role === 'assistant').slice(0, 5);
        // Byte for byte: the calls with their ids, the results with theirs (the last result's per-call note aside).
        expect(JSON.stringify(replayed.slice(0, 4))).toBe(JSON.stringify(third.filter((m) => m.role === 'tool' || m.role === 'assistant').slice(0, 4)));
        expect(replayed[4]).toMatchObject({ role: 'tool', tool_call_id: 'call_2_0' });
      }, SCENARIO_TIMEOUT_MS);
    });
  });
});
