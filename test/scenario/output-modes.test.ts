/**
 * SPEC §4 output modes on one tool turn, and SPEC §8/§12 request size and prefix stability:
 * the built CLI against the fake Ollama, on each storage backend.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateEvent } from '../../src/agent/events.js';
import { hasAnsi, type JsonObject } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import type { FakeScript } from '../support/fake-ollama.js';
import {
  SCENARIO_TIMEOUT_MS,
  describeRun,
  eventsOf,
  expectValidStream,
  requestMessages,
  resultOf,
  scenario,
  typeSequence,
  writeFiles,
} from './helpers.js';

const ANSWER = 'The notes say: hello from the notes file. ✅';

/** One tool turn (thinking, then two calls), then a plain answer. */
const ONE_TOOL_TURN: FakeScript = {
  turns: [
    {
      thinking: 'The user wants the notes; read the file and look around.',
      tool_calls: [
        { name: 'read_file', arguments: { path: 'notes.txt' } },
        { name: 'list_dir', arguments: {} },
      ],
    },
    { content: ANSWER },
  ],
  on_exhausted: 'error',
};

forEachBackend((backend) => {
  describe('output modes', () => {
    it('text: stdout is exactly the answer and a newline, no ANSI, nothing on stderr when not a TTY', async () => {
      const s = await scenario(backend, ONE_TOOL_TURN);
      writeFiles(s.cwd, { 'notes.txt': 'hello from the notes file\n' });
      // No CI variable: progress must be off because stderr is not a terminal.
      const run = await s.navi(['run', 'what do the notes say?'], { ci: false });
      expect(run.code, describeRun(run)).toBe(0);
      expect(run.stdout).toBe(`${ANSWER}\n`);
      expect(hasAnsi(run.stdout) || hasAnsi(run.stderr)).toBe(false);
      expect(run.stderr).toBe('');
      expect(s.chats()).toHaveLength(2);
    }, SCENARIO_TIMEOUT_MS);

    it('json: stdout is exactly one JSON object, the result', async () => {
      const s = await scenario(backend, ONE_TOOL_TURN);
      writeFiles(s.cwd, { 'notes.txt': 'hello from the notes file\n' });
      const run = await s.navi(['run', '-o', 'json', 'what do the notes say?']);
      expect(run.code, describeRun(run)).toBe(0);
      expect(run.lines, 'exactly one line').toHaveLength(1);
      expect(run.stdout.endsWith('}\n')).toBe(true);
      const result = JSON.parse(run.stdout) as Record<string, unknown>;
      expect(validateEvent(result)).toEqual([]);
      expect(result).toMatchObject({
        type: 'result',
        schema_version: 1,
        seq: 0,
        status: 'success',
        reason: 'completed',
        exit_code: 0,
        result: ANSWER,
        num_turns: 2,
        errors: [],
      });
      expect(result.session_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(run.stderr).toBe('');
    }, SCENARIO_TIMEOUT_MS);

    it('stream-json: valid NDJSON events in the documented order, ending with the result', async () => {
      const s = await scenario(backend, ONE_TOOL_TURN);
      writeFiles(s.cwd, { 'notes.txt': 'hello from the notes file\n' });
      const run = await s.navi(['run', '-o', 'stream-json', 'what do the notes say?']);
      expect(run.code, describeRun(run)).toBe(0);
      const events = expectValidStream(run);
      expect(typeSequence(events)).toEqual([
        'run_started',
        'model_info',
        'thinking_delta',
        'thinking_end',
        'tool_started',
        'tool_call',
        'tool_started',
        'tool_call',
        'text_delta',
        'stream_end',
        'result',
      ]);
      expect(events[0]).toMatchObject({ type: 'run_started', profile: 'default', model: 'qwen3:8b', resumed: false });
      expect(events[1]).toMatchObject({ type: 'model_info', model: 'qwen3:8b', context_length: 40960 });

      const thinking = eventsOf(events, 'thinking_delta').map((e) => e.text).join('');
      expect(thinking).toBe(ONE_TOOL_TURN.turns[0]?.thinking);
      expect(eventsOf(events, 'thinking_end')[0]?.chars).toBe(thinking.length);

      const started = eventsOf(events, 'tool_started');
      const calls = eventsOf(events, 'tool_call');
      expect(calls.map((c) => c.call_id)).toEqual(started.map((c) => c.call_id));
      expect(new Set(calls.map((c) => c.call_id)).size).toBe(2);
      expect(calls[0]).toMatchObject({ name: 'read_file', ok: true, truncated: false, iteration: 1 });
      expect(calls[0]?.output).toContain('hello from the notes file');
      expect(calls[1]).toMatchObject({ name: 'list_dir', ok: true });
      expect(calls[1]?.output).toContain('notes.txt');

      const text = eventsOf(events, 'text_delta').map((e) => e.text).join('');
      expect(text).toBe(ANSWER);
      expect(eventsOf(events, 'stream_end')[0]).toMatchObject({ stop_reason: 'completed', text: ANSWER, iterations: 2 });
      const result = resultOf(run);
      expect(result).toMatchObject({ status: 'success', exit_code: 0, result: ANSWER, num_turns: 2, iterations: 2, errors: [] });
      const usage = result.usage as { prompt_tokens: number; completion_tokens: number };
      expect(usage.prompt_tokens).toBeGreaterThan(0);
      expect(usage.completion_tokens).toBeGreaterThan(0);
      expect(run.stderr).toBe('');
    }, SCENARIO_TIMEOUT_MS);

    it('stream-json: heartbeats during a silent prefill and a slow tool (NAVI_HEARTBEAT_MS)', async () => {
      // The tool runs until the file `go` exists, and the model's answer is held: each ends only
      // once the heartbeats it should cause have been seen.
      const s = await scenario(backend, {
        turns: [
          { tool_calls: [{ name: 'shell', arguments: { command: 'while [ ! -e go ]; do sleep 0.05; done' } }] },
          { content: 'slept' },
        ],
        on_exhausted: 'error',
      });
      const proc = s.start(['run', '-o', 'stream-json', 'sleep a little'], { env: { NAVI_HEARTBEAT_MS: '200' } });
      await proc.waitForEvent('heartbeat', (b) => b.waiting_for === 'tool');
      const release = s.fake.holdChats();
      const sinceTool = proc.events.length;
      fs.writeFileSync(path.join(s.cwd, 'go'), '');
      // Two heartbeats while the held answer keeps the model silent.
      let modelBeats = 0;
      await proc.waitForEvent('heartbeat', (b) => b.waiting_for === 'model' && proc.events.indexOf(b) >= sinceTool && ++modelBeats >= 2);
      release();
      const run = await proc.result;
      expect(run.code, describeRun(run)).toBe(0);
      const events = expectValidStream(run);
      const beats = eventsOf(events, 'heartbeat');
      const waitingFor = (what: string): JsonObject[] => beats.filter((b) => b.waiting_for === what);
      expect(waitingFor('tool').length).toBeGreaterThanOrEqual(1);
      expect(waitingFor('model').length).toBeGreaterThanOrEqual(2);
      // The held call's beats count up (the first call may have its own on a busy machine).
      const index = (ev: JsonObject | undefined): number => (ev === undefined ? -1 : events.indexOf(ev));
      const afterTool = index(eventsOf(events, 'tool_call')[0]);
      const elapsed = waitingFor('model')
        .filter((b) => index(b) > afterTool)
        .map((b) => Number(b.elapsed_ms));
      expect(elapsed.length).toBeGreaterThanOrEqual(2);
      expect(elapsed).toEqual([...elapsed].sort((a, b) => a - b));
      // The tool's heartbeats come between its start and its result.
      expect(index(waitingFor('tool')[0])).toBeGreaterThan(index(eventsOf(events, 'tool_started')[0]));
      expect(index(waitingFor('tool')[0])).toBeLessThan(index(eventsOf(events, 'tool_call')[0]));
      expect(resultOf(run)).toMatchObject({ status: 'success', result: 'slept' });
    }, SCENARIO_TIMEOUT_MS);

    it('reads the prompt from piped stdin and from --file', async () => {
      const s = await scenario(backend, { turns: [{ content: 'one' }, { content: 'two' }], on_exhausted: 'error' });
      const piped = await s.navi(['run', '-o', 'json'], { stdin: 'prompt from stdin\n' });
      expect(piped.code, describeRun(piped)).toBe(0);
      writeFiles(s.cwd, { 'prompt.md': 'prompt from a file' });
      const fromFile = await s.navi(['run', '-o', 'json', '--file', 'prompt.md']);
      expect(fromFile.code, describeRun(fromFile)).toBe(0);
      const lastUser = (i: number): unknown => requestMessages(s.chats()[i]).find((m) => m.role === 'user')?.content;
      expect(lastUser(0)).toBe('prompt from stdin\n');
      expect(lastUser(1)).toBe('prompt from a file');
    }, SCENARIO_TIMEOUT_MS);
  });

  describe('requests to the model', () => {
    it('the first request with the default profile is at most 10,000 bytes; later ones keep a stable prefix', async () => {
      const s = await scenario(backend, {
        turns: [
          { tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'alpha' } }] },
          { thinking: 'now read it back', tool_calls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] },
          { content: 'done: alpha' },
        ],
        on_exhausted: 'error',
      });
      const run = await s.navi(['run', '-o', 'stream-json', 'write alpha to a.txt and read it back']);
      expect(run.code, describeRun(run)).toBe(0);
      const chats = s.chats();
      expect(chats).toHaveLength(3);
      expect(chats[0]?.bytes).toBeLessThanOrEqual(10_000);

      const first = chats[0]?.body ?? {};
      expect(Array.isArray(first.tools) && first.tools.length).toBeGreaterThan(0);
      expect(first.options).toMatchObject({ num_ctx: expect.any(Number) as unknown });
      const system = requestMessages(chats[0])[0];
      expect(system?.role).toBe('system');
      expect(system?.content).toContain('\n---\n');

      for (let i = 1; i < chats.length; i++) {
        // Request N+1 starts with request N's messages, whole: the history is append-only (a
        // reminder, once sent, stays where it was).
        const before = requestMessages(chats[i - 1]);
        const after = requestMessages(chats[i]);
        expect(after.slice(0, before.length), `request ${i + 1} starts with request ${i}'s messages`).toEqual(before);
        expect(after.slice(before.length).map((m) => m.role)).toContain('assistant');
        // One system message, the first (Ollama hoists every system message to the prompt's top).
        expect(after.slice(1).filter((m) => m.role === 'system')).toEqual([]);
        expect(JSON.stringify(chats[i]?.body?.tools)).toBe(JSON.stringify(first.tools));
        // The same runner options (a change reloads the model); num_predict, the room left for the
        // reply, may differ per call without a reload (llm/reply-bound.ts).
        const { num_predict: bound, ...runner } = chats[i]?.body?.options as Record<string, unknown>;
        const { num_predict: _firstBound, ...firstRunner } = first.options as Record<string, unknown>;
        expect(runner).toEqual(firstRunner);
        expect(bound).toBeGreaterThan(0);
        expect(bound).toBeLessThanOrEqual(runner.num_ctx as number);
        expect(chats[i]?.body?.keep_alive).toBe(first.keep_alive);
      }
    }, SCENARIO_TIMEOUT_MS);
  });
});
