/**
 * SPEC §4 exit codes of a run that cannot finish: Ollama unavailable in each way it fails (75),
 * max iterations (3), and invalid input only the database can detect (2) — each with one
 * `navi:` line on stderr, never a stack trace, and what was already done saved.
 */
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import type { FakeTurn } from '../support/fake-ollama.js';
import { closedPort } from '../support/ports.js';
import {
  SCENARIO_TIMEOUT_MS,
  eventsOf,
  expectFailure,
  expectJsonResult,
  expectValidStream,
  resultOf,
  scenario,
} from './helpers.js';

forEachBackend((backend) => {
  describe('Ollama unavailable (exit 75)', () => {
    it('unreachable host: one line naming the host, json result llm_unavailable, no session left behind', async () => {
      const s = await scenario(backend, { turns: [] });
      const port = await closedPort();
      const run = await s.navi(['run', '-o', 'json', '--ollama-host', `http://127.0.0.1:${port}`, 'hello there'], { host: false });
      expectFailure(run, 75, new RegExp(`cannot reach Ollama at http://127\\.0\\.0\\.1:${port}`));
      const result = expectJsonResult(run, 'llm_unavailable', 'ollama_unreachable');
      // The model never answered: no session was stored, and the result names none (issue 18, item 15).
      expect(await s.db.withStore((store) => store.sessions.list({ limit: 10 }))).toEqual([]);
      expect(result.session_id).toBe('');
    }, SCENARIO_TIMEOUT_MS);

    it('a model that is not pulled leaves no session behind either; a session that was answered stays', async () => {
      const s = await scenario(backend, { turns: [{ content: 'Hello.' }] });
      const ok = await s.navi(['run', '-o', 'json', 'first']);
      expect(ok.code, ok.stderr).toBe(0);
      const kept = String(resultOf(ok).session_id);
      const missing = await s.navi(['run', '-o', 'json', '--model', 'nosuch:1b', 'second']);
      expect(missing.code).toBe(2);
      expect(resultOf(missing).session_id).toBe('');
      // Continuing a stored session that then fails keeps it whole (never delete what has messages).
      const port = await closedPort();
      const resumed = await s.navi(['run', '-o', 'json', '--ollama-host', `http://127.0.0.1:${port}`, '-s', kept, 'third'], { host: false });
      expect(resumed.code).toBe(75);
      expect(resultOf(resumed).session_id).toBe(kept);
      const sessions = await s.db.withStore((store) => store.sessions.list({ limit: 10 }));
      expect(sessions.map((x) => x.id)).toEqual([kept]);
      const messages = await s.db.withStore((store) => store.messages.list(kept));
      expect(messages.map((m) => m.content)).toContain('first');
    }, SCENARIO_TIMEOUT_MS);

    it('missing model: exit 2, not 75 (retrying cannot help), with the `ollama pull` command', async () => {
      const s = await scenario(backend, { turns: [{ content: 'never served' }] });
      const run = await s.navi(['run', '--model', 'nosuch:1b', 'hello']);
      expectFailure(run, 2, /ollama pull nosuch:1b/);
      const json = await s.navi(['run', '-o', 'json', '--model', 'nosuch:1b', 'hello']);
      expectJsonResult(json, 'invalid_input', 'model_not_found');
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
        reason: 'runner_failed',
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
        const request = await s.fake.waitForClose(s.fake.requests.findIndex((r) => r.path === '/api/chat'), 20_000);
        expect(request.closedAt).toBeDefined();
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
