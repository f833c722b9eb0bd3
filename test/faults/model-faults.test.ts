/**
 * A model that sends what no sane model would (issue 5 item 1): 50 tool calls in one turn, a
 * 20 MB tool argument, an endless think stream. navi must execute in order, store every call
 * with its result, and stop on SIGINT — without the stream guards firing on a stream that is
 * alive. Peak memory and stop latency are printed for the report; their bounds are `npm run
 * bench` figures (SPEC §12), not assertions here.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import type { FakeToolCall } from '../support/fake-ollama.js';
import {
  FAST_TIMEOUTS,
  LONG_SCENARIO_TIMEOUT_MS,
  SCENARIO_TIMEOUT_MS,
  describeRun,
  eventsOf,
  expectCleanExit,
  expectConsistentSession,
  expectJsonResult,
  expectValidStream,
  expectWellFormedRequest,
  figuresForTheReport,
  requestMessages,
  resultOf,
  rssProbe,
  scenario,
} from './helpers.js';

const MANY = 50;

// Peak RSS with a 20 MB argument, measured: ~450 MB on PostgreSQL (the line exists as network
// bytes, a JS string, the parsed arguments, the driver's parameters and the file write at once),
// ~520–650 MB on PGlite (its WASM heap grows with the rows it writes and never shrinks).

const measured = figuresForTheReport();

forEachBackend((backend) => {
  describe('model faults', () => {
    it(`${MANY} tool calls in one turn: all run in order, ${MANY} results stored, the next request carries all of them`, async () => {
      const calls: FakeToolCall[] = Array.from({ length: MANY }, (_, i) => ({
        name: 'shell',
        arguments: { command: `echo call-${i} | tee -a order.log` },
      }));
      const s = await scenario(backend, { turns: [{ tool_calls: calls }, { content: 'All fifty ran.' }], on_exhausted: 'error' });
      const run = await s.navi(['run', '-o', 'stream-json', 'run fifty commands'], { env: FAST_TIMEOUTS });
      expect(run.code, describeRun(run)).toBe(0);
      const events = expectValidStream(run);
      const started = eventsOf(events, 'tool_started');
      const done = eventsOf(events, 'tool_call');
      expect(started).toHaveLength(MANY);
      expect(done.map((e) => [e.ok, String(e.output).split('\n')[0]])).toEqual(calls.map((_, i) => [true, `call-${i}`]));
      expect(new Set(done.map((e) => e.call_id)).size).toBe(MANY);
      // Each call ran after the previous one finished: start, result, start, result…
      const order = events.filter((e) => e.type === 'tool_started' || e.type === 'tool_call').map((e) => `${String(e.type)}:${String(e.call_id)}`);
      expect(order).toEqual(done.flatMap((e) => [`tool_started:${String(e.call_id)}`, `tool_call:${String(e.call_id)}`]));
      expect(fs.readFileSync(path.join(s.cwd, 'order.log'), 'utf8')).toBe(calls.map((_, i) => `call-${i}\n`).join(''));
      expect(resultOf(run)).toMatchObject({ status: 'success', result: 'All fifty ran.', num_turns: 2 });

      const stored = await expectConsistentSession(s.db, String(resultOf(run).session_id));
      // Task, first budget note (stored: append-only history), the call, its results, the answer.
      expect(stored.messages).toHaveLength(1 + 1 + 1 + MANY + 1);
      expect(stored.messages[2]?.tool_calls?.map((c) => c.arguments)).toEqual(calls.map((c) => c.arguments));
      expect(stored.messages.slice(3, 3 + MANY).map((m) => m.content.split('\n')[0])).toEqual(calls.map((_, i) => `call-${i}`));

      const chats = s.chats();
      expect(chats).toHaveLength(2);
      const second = requestMessages(chats[1]);
      expectWellFormedRequest(second);
      const assistant = second.find((m) => m.role === 'assistant');
      expect((assistant?.tool_calls as unknown[]).length).toBe(MANY);
      const results = second.filter((m) => m.role === 'tool');
      expect(results.map((m) => String(m.content).split('\n')[0])).toEqual(calls.map((_, i) => `call-${i}`));
    }, SCENARIO_TIMEOUT_MS);

    it('a 20 MB write_file argument: no crash, no hang, a consistent session (peak RSS printed for the report)', async () => {
      // Incompressible (base64 of random bytes), so neither the database nor the wire shrinks it.
      const content = randomBytes(15 * 1024 * 1024).toString('base64');
      expect(content.length).toBe(20 * 1024 * 1024);
      const s = await scenario(backend, {
        turns: [
          // A cheap first turn, so the store is open and warm when the big line arrives.
          { tool_calls: [{ name: 'list_dir', arguments: {} }] },
          // No model writes 20 MB within a bounded reply (num_predict): a server that ignores the bound.
          { tool_calls: [{ name: 'write_file', arguments: { path: 'big.txt', content } }], ignores_num_predict: true },
          { content: 'Wrote it.' },
        ],
        on_exhausted: 'done',
      });
      const probe = rssProbe();
      // json output: the tool_started and tool_call events would each echo the 20 MB argument
      // on stdout (42 MB of stream-json, see the report), which measures the reader, not navi.
      // Default stream timeouts (90 s / 60 s). The hang guard is far above the real ~2–5 s.
      const run = await s.navi(['run', '-o', 'json', 'write a big file'], { env: probe.env, timeoutMs: 90_000 });
      const peak = probe.peakMb();
      expectCleanExit(run, [0]);
      const result = expectJsonResult(run, 'success', 'completed');
      // From the request to the file on disk: reading the 20 MB line, parsing it, running the tool.
      const parseMs = Math.round(fs.statSync(path.join(s.cwd, 'big.txt')).mtimeMs - (s.chats()[1]?.receivedAt ?? 0));
      measured.push(`${backend.kind}: 20 MB argument: peak RSS ${peak?.toFixed(0) ?? '?'} MB, run ${run.durationMs} ms, request→file written ${parseMs} ms`);
      expect(fs.statSync(path.join(s.cwd, 'big.txt')).size).toBe(content.length);
      expect(fs.readFileSync(path.join(s.cwd, 'big.txt'), 'utf8') === content, 'the file holds the argument byte for byte').toBe(true);
      const stored = await expectConsistentSession(s.db, String(result.session_id));
      expect(stored.messages.map((m) => m.role)).toEqual(['user', 'user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
      expect(stored.messages[5]?.content).toBe(`created big.txt (${content.length} bytes)`);
      // Every later request carries a truncated view of the argument, not 20 MB again.
      const later = s.chats().slice(2).map((r) => r.bytes);
      expect(later.length).toBeGreaterThan(0);
      for (const bytes of later) expect(bytes, 'bytes of a request after the big call').toBeLessThan(1_000_000);
      expect((stored.messages[4]?.tool_calls?.[0]?.arguments as { content: string }).content === content, 'the call is stored whole').toBe(true);
      // Linearity of reading the line is asserted load-independently (a CPU-time ratio) in
      // test/llm/ollama-client-stream.unit.test.ts; the figures above are for the report.
    }, LONG_SCENARIO_TIMEOUT_MS);

    it('an endless think stream: the chunk timer never fires while chunks flow, SIGINT stops it (exit 130), the thinking is kept', async () => {
      const s = await scenario(backend, { turns: [{ thinking: 'Let me think. ', endless_thinking: true }], on_exhausted: 'error' });
      // Chunks every 10 ms against a 1 s limit: a wide margin for a loaded machine.
      const proc = s.start(['run', '-o', 'stream-json', 'think forever'], { env: { LLM_STREAM_FIRST_CHUNK_TIMEOUT: '1', LLM_STREAM_CHUNK_TIMEOUT: '1' } });
      const first = await proc.waitForEvent('thinking_delta');
      // Alive for four times the chunk timeout: a guard that fired wrongly would have ended it.
      let deltas = 0;
      await proc.waitForEvent('thinking_delta', () => ++deltas >= 2 && Date.now() - Number(Date.parse(String(first.ts))) >= 4_000);
      proc.kill('SIGINT');
      const run = await proc.result;
      const latency = run.exitedAt - (run.signalsSentAt[0] ?? 0);
      measured.push(`${backend.kind}: endless thinking: exit ${latency} ms after SIGINT`);
      expectCleanExit(run, [130]);
      const events = expectValidStream(run);
      expect(eventsOf(events, 'error')).toEqual([]);
      const result = resultOf(run);
      expect(result).toMatchObject({ status: 'interrupted', exit_code: 130, reason: 'interrupted' });
      const streamed = eventsOf(events, 'thinking_delta').map((e) => String(e.text)).join('');
      expect(streamed.length).toBeGreaterThan(100);
      // The request was cut, not left streaming into a closed pipe.
      const closed = await s.fake.waitForClose(s.fake.requests.findIndex((r) => r.path === '/api/chat'), 20_000);
      expect(closed.clientClosed).toBe(true);

      const stored = await expectConsistentSession(s.db, String(result.session_id));
      expect(stored.messages.map((m) => [m.role, m.content])).toEqual([
        ['user', 'think forever'],
        ['user', expect.stringContaining('[Iteration 1 of')],
        ['assistant', ''],
      ]);
      // Everything shown was kept (the stream may have delivered a little more before the stop).
      expect(stored.messages[2]?.thinking?.startsWith(streamed)).toBe(true);
      // Reasoning alone is not an answer: the model's view holds the prompt (and the note its request carried) only.
      expect(stored.context).toEqual([
        { role: 'user', content: 'think forever' },
        { role: 'user', content: expect.stringContaining('[Iteration 1 of') as string },
      ]);
    }, SCENARIO_TIMEOUT_MS);
  });
});
