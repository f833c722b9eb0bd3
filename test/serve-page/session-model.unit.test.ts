/**
 * The live page's chat fold (src/serve/page/session-model.js): the stored display buffer, then
 * the live turn from schema-v1 events, in Node.
 */
import { describe, expect, it } from 'vitest';
import { applySessionEvent, applySessionSnapshot, contentText, displayMessage, emptySession, noteUserMessage } from '../../src/serve/page/session-model.js';

let seq = 0;
const ev = (type: string, fields: Record<string, unknown> = {}): Record<string, unknown> => ({ type, schema_version: 1, seq: seq++, ts: '2026-12-03T10:00:00.000Z', session_id: 's1', ...fields });
const usage = { prompt_tokens: 10, completion_tokens: 2 };

describe('session model', () => {
  it.each([
    ['a string', 'hi', 'hi'],
    ['text parts', [{ type: 'text', text: 'a' }, { text: 'b' }, 7], 'ab'],
    ['nothing', undefined, ''],
  ])('contentText of %s', (_name, content, text) => expect(contentText(content)).toBe(text));

  it.each([
    ['user', { role: 'user', content: 'hi' }, { role: 'user', text: 'hi', toolCalls: [] }],
    ['assistant with a call', { role: 'assistant', content: '', tool_calls: [{ function: { name: 'read_file', arguments: { path: 'a' } } }] }, { role: 'assistant', toolCalls: [{ name: 'read_file', arguments: { path: 'a' } }] }],
    ['tool result', { role: 'tool', content: 'out', tool_name: 'read_file' }, { role: 'tool', text: 'out', toolName: 'read_file' }],
  ])('displayMessage: %s', (_name, message, shown) => expect(displayMessage(message)).toMatchObject(shown));

  it('the snapshot is the display buffer; a turn streams, then becomes a message when the next begins', () => {
    seq = 0;
    const s = emptySession('s1');
    applySessionSnapshot(s, { id: 's1', profile: 'default', status: 'idle', messages: [{ role: 'user', content: 'first' }, { role: 'assistant', content: 'ok' }] });
    expect(s.messages.map((m) => [m.role, m.text])).toEqual([['user', 'first'], ['assistant', 'ok']]);
    noteUserMessage(s, 'second <script>');
    for (const e of [
      ev('run_started', { profile: 'default', model: 'm', cwd: '/', resumed: true }),
      ev('thinking_delta', { text: 'hm' }),
      ev('text_delta', { text: 'ans' }),
      ev('tool_started', { call_id: 'c', name: 'shell', arguments: { command: 'ls' } }),
      ev('tool_call', { call_id: 'c', name: 'shell', arguments: { command: 'ls' }, ok: false, duration_ms: 1, output: 'no', truncated: false }),
      ev('text_delta', { text: 'wer' }),
      ev('stream_end', { stop_reason: 'completed', text: 'answer', iterations: 2, usage }),
      ev('result', { status: 'success', reason: 'completed', exit_code: 0, result: 'answer', num_turns: 2, usage, duration_ms: 5, errors: [] }),
    ]) applySessionEvent(s, e);
    expect(s.status).toBe('idle');
    expect(s.live?.user).toBe('second <script>');
    expect(s.live?.blocks.map((b) => [b.kind, b.text ?? b.name])).toEqual([['thinking', 'hm'], ['text', 'ans'], ['tool', 'shell'], ['text', 'wer']]);
    noteUserMessage(s, 'third');
    expect(s.messages.map((m) => [m.role, m.text])).toEqual([['user', 'first'], ['assistant', 'ok'], ['user', 'second <script>'], ['assistant', 'answer']]);
    expect(s.live).toMatchObject({ user: 'third', blocks: [] });
  });

  it('a failed turn says why; sub-agent events stay out of the chat', () => {
    seq = 0;
    const s = emptySession('s1');
    applySessionEvent(s, ev('run_started', { profile: 'default', model: 'm', cwd: '/', resumed: false }));
    applySessionEvent(s, ev('text_delta', { text: 'sub', is_subagent: true }));
    applySessionEvent(s, ev('result', { status: 'llm_unavailable', reason: 'x', exit_code: 1, result: '', num_turns: 0, usage, duration_ms: 1, errors: ['Ollama is down'] }));
    expect([s.status, s.error, s.live?.blocks]).toEqual(['idle', 'Ollama is down', []]);
  });
});
