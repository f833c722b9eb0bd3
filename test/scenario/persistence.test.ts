/**
 * What a run leaves in the database (SPEC §8 two buffers, §9), the `sessions` commands,
 * continuing a session from a new process, and secret redaction before anything is stored or
 * shown (SPEC §10).
 */
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import type { FakeScript } from '../support/fake-ollama.js';
import {
  LONG_SCENARIO_TIMEOUT_MS,
  describeRun,
  eventsOf,
  expectValidStream,
  requestMessages,
  resultOf,
  scenario,
  writeFiles,
  type Scenario,
} from './helpers.js';

const PROMPT = 'Create a.txt with alpha, then read it back\nand tell me what it says.';

/** Two tool turns, then the answer; then the answer to a follow-up in the same session. */
const TWO_TOOL_TURNS: FakeScript = {
  turns: [
    { tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'alpha\n' } }] },
    { thinking: 'Now read it back.', tool_calls: [{ name: 'read_file', arguments: { path: 'a.txt' } }], content: 'Reading.' },
    { thinking: 'It says alpha.', content: 'a.txt says: alpha' },
    { content: 'Continuing: still alpha.' },
  ],
  on_exhausted: 'error',
};

async function twoToolTurns(s: Scenario): Promise<{ sessionId: string; outputs: string[] }> {
  const run = await s.navi(['run', '-o', 'stream-json', PROMPT]);
  expect(run.code, describeRun(run)).toBe(0);
  const events = expectValidStream(run);
  return { sessionId: String(resultOf(run).session_id), outputs: eventsOf(events, 'tool_call').map((e) => String(e.output)) };
}

forEachBackend((backend) => {
  describe('persistence', () => {
    it('a run with two tool turns stores every message in order, in both buffers, with the session and its usage', async () => {
      const s = await scenario(backend, TWO_TOOL_TURNS);
      const run = await s.navi(['run', '-o', 'stream-json', PROMPT]);
      expect(run.code, describeRun(run)).toBe(0);
      const events = expectValidStream(run);
      const result = resultOf(run);
      const sessionId = String(result.session_id);
      const outputs = eventsOf(events, 'tool_call').map((e) => String(e.output));

      const { session, messages, context } = await s.db.withStore(async (store) => ({
        session: await store.sessions.get(sessionId),
        messages: await store.messages.list(sessionId),
        context: await store.context.load(sessionId),
      }));
      expect(session).toMatchObject({ id: sessionId, kind: 'chat', profile: 'default', model: 'qwen3:8b', parentId: null });
      expect(session?.title).toBe(PROMPT.split('\n')[0]);
      expect(session?.cwd).toBe(eventsOf(events, 'run_started')[0]?.cwd);
      const usage = result.usage as { prompt_tokens: number; completion_tokens: number };
      expect(session?.promptTokens).toBe(usage.prompt_tokens);
      expect(session?.completionTokens).toBe(usage.completion_tokens);

      // The task, then the first call's budget note: stored, since a note once sent stays (append-only history).
      expect(messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(messages.map((m) => ({ role: m.role, content: m.content, tool_name: m.tool_name, calls: m.tool_calls?.map((c) => c.name) }))).toEqual([
        { role: 'user', content: PROMPT, tool_name: undefined, calls: undefined },
        { role: 'user', content: expect.stringContaining('[Iteration 1 of 40') as string, tool_name: undefined, calls: undefined },
        { role: 'assistant', content: '', tool_name: undefined, calls: ['write_file'] },
        { role: 'tool', content: outputs[0], tool_name: 'write_file', calls: undefined },
        { role: 'assistant', content: 'Reading.', tool_name: undefined, calls: ['read_file'] },
        { role: 'tool', content: outputs[1], tool_name: 'read_file', calls: undefined },
        { role: 'assistant', content: 'a.txt says: alpha', tool_name: undefined, calls: undefined },
      ]);
      expect(messages[4]?.thinking).toBe('Now read it back.');
      expect(messages[6]?.thinking).toBe('It says alpha.');
      expect(messages[2]?.tool_calls?.[0]?.arguments).toEqual({ path: 'a.txt', content: 'alpha\n' });
      expect(outputs[1]).toBe('alpha');

      // The model's view holds the same conversation, reasoning included (it is sent back on
      // every later request: the template decides what to render).
      expect(context).toEqual(messages.map(({ role, content, thinking, tool_calls, tool_name, tool_call_id }) => ({
        role,
        content,
        ...(thinking ? { thinking } : {}),
        ...(tool_calls ? { tool_calls } : {}),
        ...(tool_name ? { tool_name } : {}),
        ...(tool_call_id ? { tool_call_id } : {}),
      })));
    }, LONG_SCENARIO_TIMEOUT_MS);

    it('`navi run --session ID` continues: the new request replays the stored conversation byte for byte', async () => {
      const s = await scenario(backend, TWO_TOOL_TURNS);
      const { sessionId } = await twoToolTurns(s);
      const before = s.chats();
      expect(before).toHaveLength(3);

      const next = await s.navi(['run', '-o', 'stream-json', '--session', sessionId, 'next']);
      expect(next.code, describeRun(next)).toBe(0);
      const events = expectValidStream(next);
      expect(events[0]).toMatchObject({ type: 'run_started', session_id: sessionId, resumed: true });
      expect(resultOf(next)).toMatchObject({ session_id: sessionId, status: 'success', result: 'Continuing: still alpha.' });

      const last = requestMessages(before[2]);
      const resumed = requestMessages(s.chats()[3]);
      // Same system prompt and history as the last call of the first process, whole (reasoning
      // included; notes were stored where they were sent), then the answer, the new prompt and
      // its first call's budget note.
      expect(resumed.slice(0, last.length)).toEqual(last);
      const rest = resumed.slice(last.length);
      expect(rest.slice(0, 2)).toEqual([
        { role: 'assistant', content: 'a.txt says: alpha', thinking: 'It says alpha.' },
        { role: 'user', content: 'next' },
      ]);
      expect(rest[2]).toMatchObject({ role: 'user', content: expect.stringContaining('[Iteration 1 of 40') as string });
      expect(rest).toHaveLength(3);
      expect(JSON.stringify(s.chats()[3]?.body?.tools)).toBe(JSON.stringify(before[0]?.body?.tools));

      const messages = await s.db.withStore((store) => store.messages.list(sessionId));
      expect(messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(messages.slice(7).map((m) => [m.role, m.content])).toEqual([
        ['user', 'next'],
        ['user', expect.stringContaining('[Iteration 1 of 40')],
        ['assistant', 'Continuing: still alpha.'],
      ]);
    }, LONG_SCENARIO_TIMEOUT_MS);

    it('`navi sessions list` and `show` in text and json', async () => {
      const s = await scenario(backend, TWO_TOOL_TURNS);
      const { sessionId } = await twoToolTurns(s);

      const list = await s.navi(['sessions', 'list']);
      expect(list.code, describeRun(list)).toBe(0);
      expect(list.lines).toHaveLength(1);
      expect(list.stdout).toContain(sessionId);
      expect(list.stdout).toContain(PROMPT.split('\n')[0]);

      const listJson = await s.navi(['sessions', 'list', '-o', 'json']);
      expect(listJson.code, describeRun(listJson)).toBe(0);
      expect(listJson.lines).toHaveLength(1);
      const listed = JSON.parse(listJson.stdout) as { sessions: Array<Record<string, unknown>> };
      expect(listed.sessions).toHaveLength(1);
      expect(listed.sessions[0]).toMatchObject({ id: sessionId, kind: 'chat', profile: 'default', title: PROMPT.split('\n')[0] });

      const show = await s.navi(['sessions', 'show', sessionId]);
      expect(show.code, describeRun(show)).toBe(0);
      expect(show.stdout).toContain(`session ${sessionId}`);
      expect(show.stdout).toContain('── user #1');
      expect(show.stdout).toContain(PROMPT);
      expect(show.stdout).toContain('→ write_file {"path":"a.txt","content":"alpha\\n"}');
      expect(show.stdout).toContain('── tool read_file #6');
      expect(show.stdout).toContain('── assistant #7\na.txt says: alpha');

      const showJson = await s.navi(['sessions', 'show', sessionId, '-o', 'json']);
      expect(showJson.code, describeRun(showJson)).toBe(0);
      const shown = JSON.parse(showJson.stdout) as { session: { id: string }; messages: Array<{ seq: number; role: string }> };
      expect(shown.session.id).toBe(sessionId);
      expect(shown.messages.map((m) => `${m.seq}:${m.role}`)).toEqual(['1:user', '2:user', '3:assistant', '4:tool', '5:assistant', '6:tool', '7:assistant']);
    }, LONG_SCENARIO_TIMEOUT_MS);

    it('`navi sessions rm` deletes the session and everything stored with it', async () => {
      const s = await scenario(backend, TWO_TOOL_TURNS);
      const { sessionId } = await twoToolTurns(s);
      const rm = await s.navi(['sessions', 'rm', sessionId, '-o', 'json']);
      expect(rm.code, describeRun(rm)).toBe(0);
      expect(JSON.parse(rm.stdout)).toEqual({ removed: sessionId });
      const gone = await s.navi(['sessions', 'show', sessionId]);
      expect(gone.code).not.toBe(0);
      expect(gone.stderr).toContain(`no session '${sessionId}'`);
      const rmAgain = await s.navi(['sessions', 'rm', sessionId]);
      expect(rmAgain.code).not.toBe(0);
      const empty = await s.navi(['sessions', 'list', '-o', 'json']);
      expect(JSON.parse(empty.stdout)).toEqual({ sessions: [] });
      // Everything that belonged to the session went with it.
      const left = await s.db.withStore(async (store) => [await store.messages.list(sessionId), await store.context.load(sessionId)]);
      expect(left).toEqual([[], []]);
    }, LONG_SCENARIO_TIMEOUT_MS);
  });

  describe('secret redaction', () => {
    const SECRET = 'supersecretvalue123';

    it('a secret from the environment never reaches the model, the output or the database', async () => {
      const s = await scenario(backend, {
        turns: [
          {
            tool_calls: [
              { name: 'shell', arguments: { command: 'echo "key=$MY_API_KEY"' } },
              { name: 'read_file', arguments: { path: '.env' } },
              { name: 'search_files', arguments: { pattern: 'MY_API_KEY' } },
            ],
          },
          { content: 'I looked at the key.' },
        ],
        on_exhausted: 'error',
      });
      writeFiles(s.cwd, { '.env': `MY_API_KEY=${SECRET}\n` });
      const run = await s.navi(['run', '-o', 'stream-json', 'show me the api key'], { env: { MY_API_KEY: SECRET } });
      expect(run.code, describeRun(run)).toBe(0);
      const events = expectValidStream(run);
      const calls = eventsOf(events, 'tool_call');
      expect(calls).toHaveLength(3);
      expect(calls[0]?.output).toContain('key=[REDACTED:MY_API_KEY]');
      expect(calls[1]?.output).toContain('MY_API_KEY=[REDACTED:MY_API_KEY]');
      expect(calls[2]?.output).toContain('[REDACTED:MY_API_KEY]');

      expect(run.stdout).not.toContain(SECRET);
      expect(run.stderr).not.toContain(SECRET);
      const chats = s.chats();
      expect(chats).toHaveLength(2);
      expect(JSON.stringify(chats[1]?.body)).toContain('[REDACTED:MY_API_KEY]');
      for (const chat of chats) expect(JSON.stringify(chat.body)).not.toContain(SECRET);

      const sessionId = String(resultOf(run).session_id);
      const stored = await s.db.withStore(async (store) => ({
        messages: await store.messages.list(sessionId),
        context: await store.context.load(sessionId),
      }));
      expect(stored.messages).toHaveLength(7);
      expect(JSON.stringify(stored)).not.toContain(SECRET);

      const shown = await s.navi(['sessions', 'show', sessionId]);
      expect(shown.code, describeRun(shown)).toBe(0);
      expect(shown.stdout).toContain('[REDACTED:MY_API_KEY]');
      expect(shown.stdout).not.toContain(SECRET);
    }, LONG_SCENARIO_TIMEOUT_MS);
  });
}, { both: 'what a run stores and a new process reads back is the store contract' });
