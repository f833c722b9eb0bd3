/**
 * The pure parts of the recording format: how a request is taken apart and redacted, the diff
 * a mismatch shows (table-driven over what users change: a setting, a tool, a tool schema, the
 * system prompt, a message added or gone), streamed redaction across lines, and how a bad
 * recording file is refused (exit 2 naming the line).
 */
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/errors.js';
import { describeRequest, redactStream } from '../../src/llm/recording-format.js';
import { parseRecording } from '../../src/llm/recording-read.js';
import { requestDiff, type RequestView } from '../../src/llm/request-diff.js';
import { createRedactor } from '../../src/tools/redact.js';

const none = createRedactor({});

function chat(body: Record<string, unknown>): RequestView {
  return describeRequest({ method: 'POST', path: '/api/chat', body: Buffer.from(JSON.stringify(body)) }, none);
}

const tool = (name: string, description = 'd'): unknown => ({ type: 'function', function: { name, description, parameters: { type: 'object' } } });
const base = {
  model: 'qwen3:8b',
  messages: [
    { role: 'system', content: 'You are navi.\nBe brief.' },
    { role: 'user', content: 'hello' },
  ],
  tools: [tool('read_file'), tool('shell')],
  think: true,
  options: { num_ctx: 8192 },
  stream: true,
};

describe('requestDiff', () => {
  const cases: Array<{ name: string; now: Record<string, unknown>; expected: string[] }> = [
    { name: 'equal requests', now: base, expected: [] },
    { name: 'a setting', now: { ...base, options: { num_ctx: 4096 } }, expected: ['setting options.num_ctx: recorded 8192, now 4096'] },
    { name: 'the model', now: { ...base, model: 'llama3.1' }, expected: ['setting model: recorded "qwen3:8b", now "llama3.1"'] },
    { name: 'a tool added', now: { ...base, tools: [tool('read_file'), tool('shell'), tool('write_file')] }, expected: ['tools: recorded [read_file, shell], now [read_file, shell, write_file] (added write_file)'] },
    { name: 'a tool removed', now: { ...base, tools: [tool('read_file')] }, expected: ['tools: recorded [read_file, shell], now [read_file] (removed shell)'] },
    {
      name: "a tool's schema",
      now: { ...base, tools: [tool('read_file', 'Read a file'), tool('shell')] },
      expected: [
        'tool schema read_file differs at character 66 (its line 1):',
        '  recorded: …e":"read_file","description":"d","parameters":{"type":"object"}}}',
        '  now:      …e":"read_file","description":"Read a file","parameters":{"type":"object"}}}',
      ],
    },
    {
      name: 'the system prompt, second line',
      now: { ...base, messages: [{ role: 'system', content: 'You are navi.\nBe thorough.' }, base.messages[1]] },
      expected: ['message 0 (system) content differs at character 18 (its line 2):', '  recorded: "You are navi.\\nBe brief."', '  now:      "You are navi.\\nBe thorough."'],
    },
    {
      name: 'a message more',
      now: { ...base, messages: [...base.messages, { role: 'user', content: 'and more' }] },
      expected: ['message 2 (user) is new: the recorded request had 2 messages, this one has 3', '  now: "and more"'],
    },
    {
      name: 'a message fewer',
      now: { ...base, messages: [base.messages[0]] },
      expected: ['message 1 (user) is missing: the recorded request had 2 messages, this one has 1', '  recorded: "hello"'],
    },
    { name: 'a role', now: { ...base, messages: [base.messages[0], { role: 'assistant', content: 'hello' }] }, expected: ['message 1: recorded role user, now assistant'] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(requestDiff(chat(base), chat(c.now))).toEqual(c.expected);
    });
  }

  it('another endpoint, and a metadata body', () => {
    const show = (model: string): RequestView => describeRequest({ method: 'POST', path: '/api/show', body: Buffer.from(JSON.stringify({ model })) }, none);
    expect(requestDiff(chat(base), show('x'))).toEqual(['recorded POST /api/chat, now POST /api/show']);
    expect(requestDiff(show('qwen3:8b'), show('qwen3:4b'))[0]).toBe('body differs at character 17 (its line 1):');
  });
});

describe('describeRequest', () => {
  it('equal requests have equal digests; any byte of a message changes it', () => {
    expect(chat(base).record.digest).toBe(chat(JSON.parse(JSON.stringify(base)) as Record<string, unknown>).record.digest);
    expect(chat({ ...base, messages: [base.messages[0], { role: 'user', content: 'hello!' }] }).record.digest).not.toBe(chat(base).record.digest);
  });

  it('secrets are redacted before hashing, so a recording made with them replays with them', () => {
    const redact = createRedactor({ API_TOKEN: 'tok-1234567890' });
    const withSecret = describeRequest({ method: 'POST', path: '/api/chat', body: Buffer.from(JSON.stringify({ ...base, messages: [{ role: 'user', content: 'token tok-1234567890' }] })) }, redact);
    expect(JSON.stringify([...withSecret.blobs.values()])).not.toContain('tok-1234567890');
    expect(JSON.stringify([...withSecret.blobs.values()])).toContain('[REDACTED:API_TOKEN]');
  });
});

describe('redactStream', () => {
  const redact = createRedactor({ GITHUB_TOKEN: 'ghs_abcdef123456' });
  const line = (content: string, done = false): string => JSON.stringify({ model: 'm', message: { role: 'assistant', content }, done });
  const cases: Array<{ name: string; pieces: string[]; text: string }> = [
    { name: 'a secret inside one line', pieces: ['the ghs_abcdef123456 key', ''], text: 'the [REDACTED:GITHUB_TOKEN] key' },
    { name: 'a secret split over three lines', pieces: ['key gh', 's_abcdef', '123456 end', ''], text: 'key [REDACTED:GITHUB_TOKEN] end' },
    { name: 'a line ending like a secret that is not one', pieces: ['say g', 'oodbye', ''], text: 'say goodbye' },
    { name: 'a secret at the very end', pieces: ['x ghs_abc', 'def123456'], text: 'x [REDACTED:GITHUB_TOKEN]' },
  ];
  for (const c of cases) {
    it(`${c.name}: no line holds it, the whole text is redacted, the line count stays`, () => {
      const raw = c.pieces.map((p, i) => line(p, i === c.pieces.length - 1));
      const out = redactStream(raw, redact);
      expect(out).toHaveLength(raw.length);
      const text = out.map((l) => (JSON.parse(l) as { message: { content: string } }).message.content).join('');
      expect(text).toBe(c.text);
      expect(out.join('\n')).not.toMatch(/ghs_abcdef123456/);
    });
  }

  it('lines without secrets keep their raw bytes', () => {
    const raw = ['{"message":{"content":"a\\u00e9"} , "done":false}', 'not json'];
    expect(redactStream(raw, redact)).toEqual(raw);
  });
});

describe('parseRecording', () => {
  const header = '{"type":"header","format":"navi-recording","version":1}';
  const cases: Array<{ name: string; text: string; message: RegExp }> = [
    { name: 'empty', text: '', message: /^--replay f\.jsonl: the file is empty; record one with --record FILE$/ },
    { name: 'not JSON', text: `${header}\n{oops`, message: /^--replay f\.jsonl: line 2: not JSON/ },
    { name: 'no header', text: '{"type":"exchange"}', message: /^--replay f\.jsonl: line 1: not a navi recording/ },
    { name: 'another version', text: '{"type":"header","format":"navi-recording","version":2}', message: /line 1: recording format version 2; this navi reads version 1/ },
    { name: 'unknown line type', text: `${header}\n{"type":"chunk"}`, message: /line 2: unknown line type "chunk"/ },
    { name: 'a bad exchange', text: `${header}\n{"type":"exchange","seq":1,"request":{"method":"POST"},"response":{}}`, message: /line 2: bad exchange line \(request\.path: / },
    {
      name: 'a blob used before it is defined',
      text: `${header}\n{"type":"exchange","seq":1,"request":{"method":"POST","path":"/api/chat","digest":"d","frame":"f","tools":[],"messages":[]},"response":{"status":200,"end":{"how":"end","ms":1}}}`,
      message: /line 2: refers to blob f, which no line before it defines/,
    },
  ];
  for (const c of cases) {
    it(`${c.name}: exit 2 naming the line`, () => {
      let error: unknown;
      try {
        parseRecording(c.text, 'f.jsonl');
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as InvalidInputError).message).toMatch(c.message);
    });
  }
});
