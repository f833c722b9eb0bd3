/**
 * navi against a fake that behaves like the real Ollama server (SPEC §13; test/support/fake-ollama.ts
 * cites the server source for each behaviour): models without thinking or tools, the model's own
 * mistakes, the chunk shapes real parsers produce, thinking sent back, and the prompt the server
 * renders staying a prefix from call to call.
 */
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import type { FakeScript, RecordedRequest } from '../support/fake-ollama.js';
import { prefixRuleBreaks } from '../support/prefix-rule.js';
import { prefixBreaks } from '../support/render-prompt.js';
import { SCENARIO_TIMEOUT_MS, describeRun, eventsOf, expectValidStream, requestMessages, resultOf, scenario, writeFiles } from './helpers.js';

const LLAMA = { name: 'llama3.1:8b', context_length: 131072, capabilities: ['completion', 'tools'] };
const GEMMA = { name: 'gemma2:2b', context_length: 8192, capabilities: ['completion'] };

/** Chat request bodies. */
function bodies(chats: readonly RecordedRequest[]): Array<Record<string, unknown>> {
  return chats.map((c) => c.body ?? {});
}

/** The requests of one conversation: those whose first user message is `first`. */
function conversation(chats: readonly RecordedRequest[], first: (text: string) => boolean): RecordedRequest[] {
  return chats.filter((c) => {
    const user = requestMessages(c).find((m) => m.role === 'user');
    return typeof user?.content === 'string' && first(user.content);
  });
}

forEachBackend(
  (backend) => {
    describe('models as Ollama reports them', () => {
      it('a model without thinking runs without think (Ollama would answer 400), and says so only when asked for explicitly', async () => {
        const s = await scenario(backend, { models: [LLAMA], turns: [{ tool_calls: [{ name: 'list_dir', arguments: {} }] }, { content: 'Listed.' }], on_exhausted: 'error' });
        const run = await s.navi(['run', '-o', 'stream-json', '--model', LLAMA.name, 'list the files']);
        expect(run.code, describeRun(run)).toBe(0);
        const events = expectValidStream(run);
        expect(eventsOf(events, 'model_info')[0]).toMatchObject({ capabilities: ['completion', 'tools'], think: false });
        expect(s.chats().map((c) => c.body?.think)).toEqual([false, false]);
        expect(eventsOf(events, 'warning')).toEqual([]);

        // A config that asks for thinking gets one line saying it cannot be had — not a crash.
        writeFiles(s.cwd, { '.nav-config.json': JSON.stringify({ llm: { think: true } }) });
        s.fake.setScript({ models: [LLAMA], turns: [{ content: 'ok' }], on_exhausted: 'error' });
        const asked = await s.navi(['run', '-o', 'stream-json', '--model', LLAMA.name, 'think hard']);
        expect(asked.code, describeRun(asked)).toBe(0);
        const warnings = eventsOf(expectValidStream(asked), 'warning');
        expect(warnings.map((w) => w.code)).toEqual(['thinking_unsupported']);
        expect(String(warnings[0]?.message)).toMatch(/llama3\.1:8b does not support thinking; running without it/);
        expect(s.chats().at(-1)?.body?.think).toBe(false);
      }, SCENARIO_TIMEOUT_MS);

      it('a model without tools is exit 2 naming the model and the fix (never 75 "retry later")', async () => {
        const s = await scenario(backend, { models: [GEMMA], turns: [{ content: 'never' }] });
        const run = await s.navi(['run', '-o', 'json', '--model', GEMMA.name, 'hello']);
        expect(run.code, describeRun(run)).toBe(2);
        expect(resultOf(run)).toMatchObject({ status: 'invalid_input', exit_code: 2, reason: 'model_no_tools' });
        expect(String((resultOf(run).errors as string[])[0])).toMatch(/model 'gemma2:2b' cannot call tools .*--model or llm\.model/);
        expect(s.chats()).toHaveLength(0);
      }, SCENARIO_TIMEOUT_MS);
    });

    describe("the model's own mistakes are not outages", () => {
      it.each([
        ['an {"error"} line after its thinking (gpt-oss)', { thinking: 'I will write the whole file.', tool_parse_error: '{"path": "a.txt", "content": "unterminated' }],
        ['HTTP 500 before any line', { tool_parse_error: '{"path": ', tool_parse_error_http: true }],
        ["qwen3's parser message", { thinking: 'Writing.', tool_parse_error: '<function=write_file>{bad', tool_parse_error_parser: 'qwen3' as const }],
      ])('a tool call Ollama could not parse, %s: asked again with a correction, exit 0', async (_how, bad) => {
        const s = await scenario(backend, {
          turns: [bad, { tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'alpha\n' } }] }, { content: 'Wrote a.txt.' }],
          on_exhausted: 'error',
        });
        const run = await s.navi(['run', '-o', 'stream-json', 'write alpha to a.txt']);
        expect(run.code, describeRun(run)).toBe(0);
        const events = expectValidStream(run);
        expect(resultOf(run)).toMatchObject({ status: 'success', result: 'Wrote a.txt.', num_turns: 3 });
        expect(eventsOf(events, 'warning').map((w) => w.code)).toEqual(['malformed_tool_call']);
        const retry = requestMessages(s.chats()[1]);
        expect(String(retry.at(-1)?.content)).toMatch(/could not be parsed .*valid JSON object/s);
        // The failed attempt is not part of the conversation.
        expect(retry.filter((m) => m.role === 'assistant')).toEqual([]);
      }, SCENARIO_TIMEOUT_MS);

      it('a reply that thought and then said nothing (a swallowed call) is asked again', async () => {
        const s = await scenario(backend, { turns: [{ thinking: 'Call read_file on a.txt.' }, { content: 'Nothing to read.' }], on_exhausted: 'error' });
        const run = await s.navi(['run', '-o', 'stream-json', 'read a.txt']);
        expect(run.code, describeRun(run)).toBe(0);
        const events = expectValidStream(run);
        expect(resultOf(run)).toMatchObject({ status: 'success', result: 'Nothing to read.' });
        expect(eventsOf(events, 'warning').map((w) => w.code)).toEqual(['empty_reply']);
      }, SCENARIO_TIMEOUT_MS);

      it('a model that keeps failing ends the run with exit 1 and the reason, after bounded retries', async () => {
        const bad = { thinking: 'again', tool_parse_error: '{' };
        const s = await scenario(backend, { turns: [bad, bad, bad, bad], on_exhausted: 'error' });
        const run = await s.navi(['run', '-o', 'json', 'write a file']);
        expect(run.code, describeRun(run)).toBe(1);
        expect(resultOf(run)).toMatchObject({ status: 'error', exit_code: 1, reason: 'model_error', num_turns: 3 });
        expect(String((resultOf(run).errors as string[])[0])).toMatch(/could not parse .*3 times in a row/);
        expect(s.chats()).toHaveLength(3);
      }, SCENARIO_TIMEOUT_MS);
    });

    describe('chunk shapes of real parsers', () => {
      it('calls inside the done chunk with content beside them (gpt-oss), and calls split over chunks', async () => {
        const s = await scenario(backend, {
          turns: [
            { thinking: 'List first.', content: 'Listing.', tool_calls: [{ name: 'list_dir', arguments: {} }], calls_in_done: true },
            {
              split_calls: true,
              tool_calls: [
                { name: 'write_file', arguments: { path: 'a.txt', content: 'a' } },
                { name: 'read_file', arguments: { path: 'a.txt' } },
              ],
            },
            { content: 'Done.' },
          ],
          on_exhausted: 'error',
          tool_call_ids: true,
        });
        const run = await s.navi(['run', '-o', 'stream-json', 'go']);
        expect(run.code, describeRun(run)).toBe(0);
        const events = expectValidStream(run);
        expect(eventsOf(events, 'tool_call').map((e) => [e.name, e.ok])).toEqual([
          ['list_dir', true],
          ['write_file', true],
          ['read_file', true],
        ]);
        // Ollama's call ids are kept.
        expect(eventsOf(events, 'tool_call').every((e) => /^call_[a-z0-9]{8}$/.test(String(e.call_id)))).toBe(true);
        expect(resultOf(run)).toMatchObject({ result: 'Done.' });
      }, SCENARIO_TIMEOUT_MS);

      it('thinking and content on one line, and thinking after content: a new thinking block, in order', async () => {
        const s = await scenario(backend, {
          turns: [{ lines: [{ thinking: 'First thought.' }, { thinking: ' More.', content: 'Let me say ' }, { content: 'this. ' }, { thinking: 'Second thought.' }, { content: 'Done.' }] }],
          on_exhausted: 'error',
        });
        const run = await s.navi(['run', '-o', 'stream-json', 'think']);
        expect(run.code, describeRun(run)).toBe(0);
        const events = expectValidStream(run).filter((e) => ['thinking_delta', 'thinking_end', 'text_delta'].includes(String(e.type)));
        expect(events.map((e) => (e.type === 'thinking_end' ? `end:${String(e.chars)}` : `${String(e.type)}:${String(e.text)}`))).toEqual([
          'thinking_delta:First thought.',
          'thinking_delta: More.',
          'end:20',
          'text_delta:Let me say ',
          'text_delta:this. ',
          'thinking_delta:Second thought.',
          'end:15',
          'text_delta:Done.',
        ]);
      }, SCENARIO_TIMEOUT_MS);

      it('done_reason "length" is never a silent success: a warning, status incomplete, exit 3', async () => {
        const s = await scenario(backend, { turns: [{ content: 'The three steps are: first', done_reason: 'length' }], on_exhausted: 'error' });
        const run = await s.navi(['run', '-o', 'stream-json', 'explain']);
        expect(run.code, describeRun(run)).toBe(3);
        const events = expectValidStream(run);
        expect(eventsOf(events, 'warning').map((w) => w.code)).toEqual(['reply_truncated']);
        expect(resultOf(run)).toMatchObject({ status: 'incomplete', exit_code: 3, reason: 'truncated', result: 'The three steps are: first' });
        expect(String((resultOf(run).errors as string[])[0])).toMatch(/cut off .*done_reason "length".*--session/);
      }, SCENARIO_TIMEOUT_MS);
    });

    describe('the prompt Ollama renders', () => {
      it('sends the turn back whole (content, calls and thinking); one system message; the rendered prompt only grows', async () => {
        const s = await scenario(backend, {
          turns: [
            { thinking: 'Write it first.', tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'alpha\n' } }] },
            { thinking: 'Now read it.', tool_calls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] },
            { thinking: 'And list.', tool_calls: [{ name: 'list_dir', arguments: {} }] },
            { content: 'a.txt holds alpha.' },
          ],
          on_exhausted: 'error',
        });
        const run = await s.navi(['run', '-o', 'stream-json', 'write alpha to a.txt, read it, list']);
        expect(run.code, describeRun(run)).toBe(0);
        const chats = s.chats();
        expect(chats).toHaveLength(4);
        const second = requestMessages(chats[1]);
        expect(second.find((m) => m.role === 'assistant')).toMatchObject({ thinking: 'Write it first.' });
        for (const c of chats) expect(requestMessages(c).filter((m) => m.role === 'system')).toHaveLength(1);
        expect(prefixBreaks(bodies(chats))).toEqual([]);
        // Issue 17's rule: the whole previous prompt, less its last 4 tokens (prefix-rule.ts).
        expect(prefixRuleBreaks(bodies(chats))).toEqual([]);
      }, SCENARIO_TIMEOUT_MS);

      it('a sub-agent and the plan tool keep each conversation a growing prefix', async () => {
        const analysis = ['TASK: Fix it', 'GOAL: fixed', 'UNKNOWNS: none', 'RESOURCES: a.txt', 'KNOWLEDGE RULES: none', 'COMPLEXITY: simple', 'SUBTASKS: read, fix', 'COMMITMENTS: none'].join('\n');
        const s = await scenario(backend, {
          turns: [
            { thinking: 'Plan first.', tool_calls: [{ name: 'plan', arguments: {} }] },
            { content: analysis },
            { content: '1. Read a.txt — TOOL: read_file\n2. Check with a helper — AGENT: researcher' },
            { thinking: 'Delegate.', tool_calls: [{ name: 'spawn_agent', arguments: { task: 'Look at a.txt and report', profile_id: 'researcher' } }] },
            // The sub-agent: two calls of its own.
            { thinking: 'Sub: list.', tool_calls: [{ name: 'list_dir', arguments: {} }] },
            { content: 'a.txt is there.' },
            { thinking: 'Wrap up.', tool_calls: [{ name: 'todo', arguments: { action: 'list' } }] },
            { content: 'All checked.' },
          ],
          on_exhausted: 'error',
        });
        s.fake.requests.length = 0;
        const run = await s.navi(['run', '-o', 'stream-json', 'Fix a.txt: plan it and have a helper look']);
        expect(run.code, describeRun(run)).toBe(0);
        const chats = s.chats();
        const main = conversation(chats, (t) => t.startsWith('Fix a.txt'));
        const sub = conversation(chats, (t) => t.includes('Look at a.txt and report'));
        expect(main.length).toBeGreaterThanOrEqual(3);
        expect(sub).toHaveLength(2);
        expect(prefixBreaks(bodies(main))).toEqual([]);
        expect(prefixBreaks(bodies(sub))).toEqual([]);
        expect.soft(prefixRuleBreaks(bodies(main), { label: 'main' })).toEqual([]);
        expect.soft(prefixRuleBreaks(bodies(sub), { label: 'sub-agent' })).toEqual([]);
        for (const c of [...main, ...sub]) expect(requestMessages(c).filter((m) => m.role === 'system')).toHaveLength(1);
      }, SCENARIO_TIMEOUT_MS);

      it('loop mode: within each iteration the rendered prompt only grows; across iterations it keeps the whole previous prompt (issue 17)', async () => {
        const step = (n: number): FakeScript['turns'] => [
          { thinking: `Iteration ${n}: write.`, tool_calls: [{ name: 'write_file', arguments: { path: `n${n}.txt`, content: `${n}\n` } }] },
          { thinking: `Iteration ${n}: check.`, tool_calls: [{ name: 'read_file', arguments: { path: `n${n}.txt` } }] },
          { content: `Wrote n${n}.txt.` },
        ];
        const s = await scenario(backend, { turns: [...step(1), ...step(2)], on_exhausted: 'error' });
        const run = await s.navi(['loop', '-o', 'stream-json', '--max-iterations', '2', 'write the numbered files']);
        expect([0, 3], describeRun(run)).toContain(run.code);
        const chats = s.chats();
        expect(chats).toHaveLength(6);
        const iteration = (c: RecordedRequest): string =>
          String([...requestMessages(c)].reverse().find((m) => m.role === 'user' && String(m.content).startsWith('LOOP MODE'))?.content);
        const groups = new Map<string, RecordedRequest[]>();
        for (const c of chats) groups.set(iteration(c), [...(groups.get(iteration(c)) ?? []), c]);
        expect([...groups.values()].map((g) => g.length)).toEqual([3, 3]);
        for (const g of groups.values()) expect(prefixBreaks(bodies(g))).toEqual([]);
        // Issue 17's rule holds across the iterations too: one session, so one conversation.
        expect(prefixRuleBreaks(bodies(chats))).toEqual([]);
        for (const c of chats) expect(requestMessages(c).filter((m) => m.role === 'system')).toHaveLength(1);
      }, SCENARIO_TIMEOUT_MS);
    });
  },
);

/** Silences, as Ollama produces them while a tool call is being written. */
describe('a silent model is not a dead server', () => {
  forEachBackend(
    (backend) => {
      it('a call written in silence (no bytes for longer than the check interval) is waited for, with heartbeats', async () => {
        const script: FakeScript = {
          turns: [
            { thinking: 'A long file.', tool_calls: [{ name: 'write_file', arguments: { path: 'big.txt', content: 'x'.repeat(1000) } }], silent_call_ms: 2500 },
            { content: 'Written.' },
          ],
          on_exhausted: 'error',
        };
        const s = await scenario(backend, script);
        const run = await s.navi(['run', '-o', 'stream-json', 'write big.txt'], { env: { NAVI_SILENCE_CHECK_S: '0.5', NAVI_HEARTBEAT_MS: '400' } });
        expect(run.code, describeRun(run)).toBe(0);
        const events = expectValidStream(run);
        expect(eventsOf(events, 'heartbeat').some((h) => h.waiting_for === 'model')).toBe(true);
        // The server was asked whether it is alive while the model was silent.
        expect(s.fake.requests.filter((r) => r.path === '/api/version').length).toBeGreaterThan(0);
        expect(resultOf(run)).toMatchObject({ status: 'success', result: 'Written.' });
      }, SCENARIO_TIMEOUT_MS);

      it('a chunk timeout the user set is enforced as written (exit 75)', async () => {
        const s = await scenario(backend, { turns: [{ thinking: 'Long.', tool_calls: [{ name: 'list_dir', arguments: {} }], silent_call_ms: 5000 }] });
        const run = await s.navi(['run', '-o', 'json', 'go'], { env: { LLM_STREAM_CHUNK_TIMEOUT: '0.5' } });
        expect(run.code, describeRun(run)).toBe(75);
        expect(resultOf(run)).toMatchObject({ status: 'llm_unavailable', reason: 'chunk_timeout' });
      }, SCENARIO_TIMEOUT_MS);
    },
  );
});
