/**
 * The fake Ollama honours `format` as the real server does (fake-ollama-format.ts cites the
 * sources): an invalid value is a 500 before any line and uses no turn; a reply the grammar
 * could not have produced (prose, a tool call under a constraint, thinking without a thinking
 * model) is recorded as a mismatch.
 */
import { describe, expect, it } from 'vitest';
import { constrainsAfterThinking, formatMismatch, formatOf } from '../support/fake-ollama-format.js';
import { fakeOllama } from '../support/fake-ollama-harness.js';

async function chat(url: string, body: Record<string, unknown>): Promise<{ status: number; text: string }> {
  const response = await fetch(`${url}/api/chat`, { method: 'POST', body: JSON.stringify({ model: 'qwen3:8b', messages: [{ role: 'user', content: 'x' }], ...body }) });
  return { status: response.status, text: await response.text() };
}

const SCHEMA = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };

describe('fake Ollama and format', () => {
  it.each([
    [undefined, { mode: 'none' }],
    [null, { mode: 'none' }],
    ['', { mode: 'none' }],
    ['json', { mode: 'json' }],
    [SCHEMA, { mode: 'json' }],
    ['yaml', { error: 'invalid format: "\\"yaml\\""; expected "json" or a valid JSON Schema object' }],
    [[1], { error: 'invalid format: "[1]"; expected "json" or a valid JSON Schema object' }],
  ])('format %j → %j (llm/llama_server.go Completion)', (format, want) => {
    expect(formatOf(format === undefined ? {} : { format })).toEqual(want);
  });

  it('an invalid format is HTTP 500 with the server\'s message, and uses no scripted turn', async () => {
    const server = await fakeOllama({ turns: [{ content: '{"n":1}' }] });
    const bad = await chat(server.url, { format: 'yaml', stream: false });
    expect(bad.status).toBe(500);
    expect(JSON.parse(bad.text)).toEqual({ error: 'invalid format: "\\"yaml\\""; expected "json" or a valid JSON Schema object' });
    const good = await chat(server.url, { format: SCHEMA, stream: false });
    expect(good.status).toBe(200);
    expect((JSON.parse(good.text) as { message: { content: string } }).message.content).toBe('{"n":1}');
    expect(server.turnsServed).toBe(1);
    expect(server.mismatches).toEqual([]);
  });

  it('the constraint waits for a thinking model to finish thinking; otherwise it starts at the first token', () => {
    expect(constrainsAfterThinking(['completion', 'tools', 'thinking'], true)).toBe(true);
    expect(constrainsAfterThinking(['completion', 'tools', 'thinking'], undefined)).toBe(true);
    expect(constrainsAfterThinking(['completion', 'tools', 'thinking'], false)).toBe(false);
    expect(constrainsAfterThinking(['completion', 'tools'], undefined)).toBe(false);
  });

  it.each([
    [{ content: '{"n":1}' }, false, undefined],
    [{ thinking: 'hm', content: '{"n":1}' }, true, undefined],
    [{ thinking: 'hm', tool_calls: [{ name: 'read_file', arguments: {} }] }, true, undefined],
    [{ content: 'The answer is 1.' }, true, 'format: the constrained reply is JSON, scripted content is not: The answer is 1.'],
    [{ thinking: 'hm', content: '{"n":1}' }, false, 'format constrains the reply from its first token (no thinking): scripted thinking cannot be produced'],
    [{ tool_calls: [{ name: 'read_file', arguments: {} }] }, false, 'format constrains the reply once content begins: a scripted tool call cannot be produced'],
    [{ content: '{}', tool_calls: [{ name: 'read_file', arguments: {} }] }, true, 'format constrains the reply once content begins: a scripted tool call cannot be produced'],
    [{ content: '' }, true, 'format: the constrained reply is JSON, not empty'],
  ])('turn %j (constraint after thinking: %s) → %s', (turn, afterThinking, want) => {
    expect(formatMismatch(turn, afterThinking)).toBe(want);
  });

  it('records a scripted reply the format would not allow, for the turn it served', async () => {
    const server = await fakeOllama({ models: [{ name: 'llama3.1:8b', capabilities: ['completion', 'tools'] }], turns: [{ content: 'prose' }] });
    const res = await chat(server.url, { model: 'llama3.1:8b', format: SCHEMA, stream: false });
    expect(res.status).toBe(200);
    expect(server.mismatches).toEqual(['turn 0: format: the constrained reply is JSON, scripted content is not: prose']);
  });
});
