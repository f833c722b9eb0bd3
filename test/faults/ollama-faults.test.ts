/**
 * Ollama misbehaving in ways the scenario suite does not cover yet (issue 5 item 1): 5xx
 * answers (JSON and a proxy's HTML page), a connection dropped mid-reply, garbage lines, and
 * an `{"error": …}` line after some tool turns. Each: exit 75 with one clean `navi:` line, a
 * `result` of status `llm_unavailable`, and everything before the failure stored — never a
 * partial or duplicated row — so the session can be continued. A run whose model never gave one
 * complete answer stores no session at all (issue 11): there is nothing to continue.
 */
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import type { FakeTurn } from '../support/fake-ollama.js';
import {
  SCENARIO_TIMEOUT_MS,
  describeRun,
  eventsOf,
  expectConsistentSession,
  expectFailure,
  expectJsonResult,
  expectValidStream,
  expectWellFormedRequest,
  requestMessages,
  resultOf,
  roles,
  scenario,
} from './helpers.js';

interface StreamFault {
  name: string;
  turn: FakeTurn;
  reason: string;
  pattern: RegExp;
  mode: 'json' | 'stream-json';
}

const FAULTS: StreamFault[] = [
  {
    name: 'HTTP 500 with Ollama’s JSON error',
    turn: { http_status: 500 },
    reason: 'runner_failed',
    mode: 'json',
    pattern: /returned HTTP 500 for model qwen3:8b: llama runner process has terminated/,
  },
  {
    name: 'HTTP 502 with a proxy’s HTML page',
    turn: { http_status: 502, error_body_text: '<html><body><h1>502 Bad Gateway</h1>\n<p>nginx</p></body></html>' },
    reason: 'ollama_error',
    mode: 'json',
    pattern: /returned HTTP 502 for model qwen3:8b: <html><body><h1>502 Bad Gateway<\/h1>/,
  },
  {
    // A clean end without done is the model looping (test/scenario/ollama-wire.test.ts); a
    // connection cut mid-body is transport.
    name: 'a connection dropped mid-reply',
    turn: { thinking: 'let me think', content: 'a partial answer that just stops', drop_after_chunks: 3 },
    reason: 'stream_incomplete',
    mode: 'stream-json',
    pattern: /ended the response for model qwen3:8b before it was complete/,
  },
  {
    name: 'garbage lines mid-stream',
    turn: { content: 'the start of an answer', garbage: true, error_after_chunks: 2 },
    reason: 'ollama_error',
    mode: 'stream-json',
    pattern: /sent a line that is not JSON for model qwen3:8b: "this is not json"/,
  },
];

forEachBackend((backend) => {
  describe('Ollama faults (exit 75)', () => {
    for (const fault of FAULTS) {
      it(`${fault.name}: one clean line, result llm_unavailable, no session left behind (${fault.mode})`, async () => {
        const s = await scenario(backend, { turns: [fault.turn], on_exhausted: 'error' });
        const run = await s.navi(['run', '-o', fault.mode, 'hello there']);
        expectFailure(run, 75, fault.pattern);
        let result;
        if (fault.mode === 'json') {
          // The proxy's page never reaches stdout: it holds the one result object.
          result = expectJsonResult(run, 'llm_unavailable', fault.reason);
        } else {
          // The deltas that did arrive, then one error event, then the result.
          const events = expectValidStream(run);
          expect(eventsOf(events, 'error')).toEqual([expect.objectContaining({ code: fault.reason })]);
          result = resultOf(run);
          expect(result).toMatchObject({ status: 'llm_unavailable', exit_code: 75, reason: fault.reason });
        }
        // A stall that was not cut would have hit the run's hang guard (no exit 75 above).
        expect(result.errors).toEqual([expect.stringMatching(fault.pattern)]);
        // A response that did not complete is not an answer: the session was never stored.
        expect(await s.db.withStore((store) => store.sessions.list({ limit: 10 }))).toEqual([]);
      }, SCENARIO_TIMEOUT_MS);
    }

    it('an enormous error message (1 MB in an {"error": …} line, and in a 500 body) is cut to one readable line', async () => {
      const huge = (word: string): string => `${word} ${'x'.repeat(1_000_000)} end`;
      const s = await scenario(backend, {
        turns: [
          { content: 'hi', error_line: huge('an error was encountered while running the model: boom'), error_after_chunks: 1 },
          { http_status: 500, error_message: huge('model runner has unexpectedly stopped: bad') },
        ],
        on_exhausted: 'error',
      });
      for (const pattern of [/failed mid-response for model qwen3:8b: an error was encountered while running the model: boom x+/, /returned HTTP 500 for model qwen3:8b: model runner has unexpectedly stopped: bad x+/]) {
        const run = await s.navi(['run', '-o', 'json', 'hello']);
        expectFailure(run, 75, pattern);
        expect(run.stderr.length, 'bytes of the navi: line').toBeLessThan(2_000);
        const result = expectJsonResult(run, 'llm_unavailable', 'runner_failed');
        expect(JSON.stringify(result.errors).length, 'bytes of result.errors').toBeLessThan(2_000);
      }
    }, SCENARIO_TIMEOUT_MS);

    it('an {"error": …} line after two tool turns: those turns are all stored, and the session continues', async () => {
      const s = await scenario(backend, {
        turns: [
          { thinking: 'write it', tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'alpha\n' } }] },
          { tool_calls: [{ name: 'shell', arguments: { command: 'cat a.txt' } }, { name: 'list_dir', arguments: {} }] },
          { content: 'Both worked, now I', error_line: 'llama runner process has terminated: signal: killed', error_after_chunks: 2 },
          { content: 'Picked up where I left off.' },
        ],
        on_exhausted: 'error',
      });
      const first = await s.navi(['run', '-o', 'stream-json', 'do two things']);
      expectFailure(first, 75, /failed mid-response for model qwen3:8b: llama runner process has terminated: signal: killed/);
      const events = expectValidStream(first);
      expect(eventsOf(events, 'tool_call').map((e) => [e.name, e.ok])).toEqual([
        ['write_file', true],
        ['shell', true],
        ['list_dir', true],
      ]);
      const result = resultOf(first);
      expect(result).toMatchObject({ status: 'llm_unavailable', exit_code: 75, reason: 'runner_failed' });
      const sessionId = String(result.session_id);

      const stored = await expectConsistentSession(s.db, sessionId);
      expect(roles(stored.messages)).toEqual([
        'user',
        'user',
        'assistant(write_file)',
        'tool:write_file',
        'assistant(shell,list_dir)',
        'tool:shell',
        'tool:list_dir',
      ]);
      expect(stored.messages[2]?.thinking).toBe('write it');
      expect(stored.messages[5]?.content).toContain('alpha');
      expect(stored.context).toHaveLength(7);

      // Continue: the new request replays every call with its result, then the new prompt.
      const next = await s.navi(['run', '-o', 'stream-json', '--session', sessionId, 'go on']);
      expect(next.code, describeRun(next)).toBe(0);
      expectValidStream(next);
      expect(resultOf(next)).toMatchObject({ status: 'success', result: 'Picked up where I left off.' });
      const request = requestMessages(s.chats().at(-1));
      expectWellFormedRequest(request);
      expect(request.filter((m) => m.role !== 'system').map((m) => m.role)).toEqual(['user', 'user', 'assistant', 'tool', 'assistant', 'tool', 'tool', 'user', 'user']);
      expect(request.at(-1)?.content, 'the reminder rides in a trailing user message').toMatch(/^\[Iteration 1 of/);
      const after = await expectConsistentSession(s.db, sessionId);
      // The 7 of the first run, then the new prompt, its budget note and the answer.
      expect(after.messages).toHaveLength(10);
    }, SCENARIO_TIMEOUT_MS);
  });
});
