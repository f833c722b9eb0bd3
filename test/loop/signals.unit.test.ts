import { describe, expect, it } from 'vitest';
import {
  acceptSignal,
  codeSimplifiedDeclared,
  exitSignalFromText,
  exitSignalFromTool,
  parseSignals,
  resolveExitSignal,
  type ExitSignal,
} from '../../src/loop/exit-signal.js';

const V3 = 'nav-signal:v3:{"type":"exit","success":true,"reason":"done"}';
const V2 = '```pilot-signal\n{"v":2,"type":"exit","success":true,"reason":"All criteria met"}\n```';

describe('exitSignalFromText: signals', () => {
  it.each<[string, string, ExitSignal]>([
    ['bare v3 line', V3, { exit: true, reason: 'done', source: 'v3' }],
    ['v3 line after prose', `All tests pass.\n\n${V3}\n`, { exit: true, reason: 'done', source: 'v3' }],
    ['indented v3 line', `   ${V3}`, { exit: true, reason: 'done', source: 'v3' }],
    ['HTML-comment wrapped', `Done.\n<!-- ${V3} -->`, { exit: true, reason: 'done', source: 'v3' }],
    ['HTML comment, no spaces', `<!--${V3}-->`, { exit: true, reason: 'done', source: 'v3' }],
    ['HTML comment left open', `<!-- ${V3}`, { exit: true, reason: 'done', source: 'v3' }],
    ['// comment', `// ${V3}`, { exit: true, reason: 'done', source: 'v3' }],
    ['# comment', `# ${V3}`, { exit: true, reason: 'done', source: 'v3' }],
    ['CRLF text', `Done.\r\n${V3}\r\nbye\r\n`, { exit: true, reason: 'done', source: 'v3' }],
    ['success omitted (navigator hook form)', 'nav-signal:v3:{"type":"exit","reason":"ok"}', { exit: true, reason: 'ok', source: 'v3' }],
    ['reason omitted', 'nav-signal:v3:{"type":"exit"}', { exit: true, reason: '', source: 'v3' }],
    ['v2 block', `Finished.\n\n${V2}`, { exit: true, reason: 'All criteria met', source: 'v2' }],
    ['v2 block with CRLF', V2.replace(/\n/g, '\r\n'), { exit: true, reason: 'All criteria met', source: 'v2' }],
    ['v2 block, pretty JSON', '```pilot-signal\n{\n  "v": 2,\n  "type": "exit",\n  "success": true,\n  "reason": "x"\n}\n```', { exit: true, reason: 'x', source: 'v2' }],
    [
      'success false is parsed, not an exit',
      'nav-signal:v3:{"type":"exit","success":false,"reason":"blocked on creds"}',
      { exit: false, reason: 'blocked on creds', source: 'v3', rejected: 'the exit signal said success: false, so the task is not complete' },
    ],
    [
      'success as a string is not an exit',
      'nav-signal:v3:{"type":"exit","success":"true"}',
      { exit: false, reason: '', source: 'v3', rejected: 'the exit signal\'s "success" must be true or false (got "true")' },
    ],
    ['code_simplified declared', 'nav-signal:v3:{"type":"exit","reason":"r","code_simplified":true}', { exit: true, reason: 'r', source: 'v3', codeSimplified: true }],
    ['the last exit signal wins', `${V2}\nthen\nnav-signal:v3:{"type":"exit","success":false,"reason":"no"}`, { exit: false, reason: 'no', source: 'v3', rejected: 'the exit signal said success: false, so the task is not complete' }],
    ['JSON holding U+2028', 'nav-signal:v3:{"type":"exit","reason":"a\u2028b"}', { exit: true, reason: 'a\u2028b', source: 'v3' }],
  ])('%s', (_name, text, expected) => {
    expect(exitSignalFromText(text)).toEqual(expected);
  });
});

describe('exitSignalFromText: not signals', () => {
  it.each([
    ['plain text', 'EXIT_SIGNAL: true\nPhase: VERIFY'],
    ['the completion line alone', '{"v":2,"type":"exit","success":true,"reason":"All criteria met"}'],
    ['prose before on the same line', `I am done: ${V3}`],
    ['prose before an HTML comment', `done <!-- ${V3} -->`],
    ['trailing text after the JSON', `${V3} trailing words`],
    ['trailing text after the comment', `<!-- ${V3} --> ok`],
    ['closer without opener', `${V3} -->`],
    ['closer after a // comment', `// ${V3} -->`],
    ['unknown type', 'nav-signal:v3:{"type":"shutdown"}'],
    ['unknown v2 type', '```pilot-signal\n{"v":2,"type":"heartbeat"}\n```'],
    ['malformed JSON', 'nav-signal:v3:{not json}'],
    ['malformed v2 JSON', '```pilot-signal\n{broken\n```'],
    ['JSON that is not an object', '```pilot-signal\n[1, 2, 3]\n```'],
    ['missing type', 'nav-signal:v3:{"success":true}'],
    ['a status signal', 'nav-signal:v3:{"type":"status","phase":"IMPL"}'],
    ['wrong prefix version', 'nav-signal:v2:{"type":"exit"}'],
    ['unterminated v2 fence', '```pilot-signal\n{"type":"exit"}'],
    ['empty', ''],
  ])('%s', (_name, text) => {
    expect(exitSignalFromText(text)).toBeNull();
  });
});

describe('parseSignals', () => {
  it('returns v2 and v3 signals in document order without the version field', () => {
    const text = `${'```pilot-signal\n{"v": 2, "type": "status", "phase": "VERIFY"}\n```'}\nwork\n${V3}\n`;
    expect(parseSignals(text).map((s) => [s.source, s.type, s.fields])).toEqual([
      ['v2', 'status', { type: 'status', phase: 'VERIFY' }],
      ['v3', 'exit', { type: 'exit', success: true, reason: 'done' }],
    ]);
  });
});

describe('exitSignalFromTool', () => {
  it.each<[unknown, ExitSignal | null]>([
    [{ type: 'exit', success: true, reason: 'all green' }, { exit: true, reason: 'all green', source: 'tool' }],
    [{ type: 'exit', success: true, reason: 'x', code_simplified: true }, { exit: true, reason: 'x', source: 'tool', codeSimplified: true }],
    [{ type: 'exit', success: false, reason: 'stuck' }, { exit: false, reason: 'stuck', source: 'tool', rejected: 'the exit signal said success: false, so the task is not complete' }],
    [{ type: 'status' }, null],
    ['exit', null],
    [null, null],
  ])('%j', (args, expected) => {
    expect(exitSignalFromTool(args)).toEqual(expected);
  });
});

describe('acceptSignal', () => {
  const exit: ExitSignal = { exit: true, reason: 'done', source: 'v3' };
  it('accepts an exit from an iteration that used tools', () => {
    expect(acceptSignal(exit, 3)).toEqual(exit);
  });
  it('rejects an exit from an iteration with zero tool calls, saying why', () => {
    const out = acceptSignal(exit, 0);
    expect(out?.exit).toBe(false);
    expect(out?.rejected).toMatch(/no tool calls/);
    expect(out?.reason).toBe('done');
  });
  it('passes non-exits and null through', () => {
    const no: ExitSignal = { exit: false, reason: '', source: 'tool', rejected: 'x' };
    expect(acceptSignal(no, 0)).toBe(no);
    expect(acceptSignal(null, 0)).toBeNull();
  });
});

describe('resolveExitSignal', () => {
  it('prefers the final text (the model\'s last word) over loop_signal calls', () => {
    const out = resolveExitSignal({
      toolArgs: [{ type: 'exit', success: true, reason: 'tool' }],
      finalText: 'nav-signal:v3:{"type":"exit","success":false,"reason":"text"}',
      toolCalls: 2,
    });
    expect(out).toMatchObject({ exit: false, source: 'v3', reason: 'text' });
  });
  it('falls back to the last loop_signal call', () => {
    const out = resolveExitSignal({
      toolArgs: [{ type: 'exit', success: false, reason: 'a' }, { type: 'exit', success: true, reason: 'b' }],
      finalText: 'All done.',
      toolCalls: 1,
    });
    expect(out).toEqual({ exit: true, reason: 'b', source: 'tool' });
  });
  it('applies the zero-tool-call rule', () => {
    expect(resolveExitSignal({ toolArgs: [], finalText: V3, toolCalls: 0 })?.exit).toBe(false);
  });
  it('is null without any signal', () => {
    expect(resolveExitSignal({ toolArgs: [], finalText: 'hello', toolCalls: 4 })).toBeNull();
  });
});

describe('codeSimplifiedDeclared', () => {
  it.each<[string, unknown[], boolean]>([
    ['nav-signal:v3:{"type":"status","code_simplified":true}', [], true],
    ['nav-signal:v3:{"type":"exit","code_simplified":true}', [], true],
    ['nav-signal:v3:{"type":"exit","code_simplified":"yes"}', [], false],
    ['code_simplified: true', [], false],
    ['', [{ type: 'exit', success: true, code_simplified: true }], true],
    ['', [{ type: 'exit', success: true }], false],
  ])('%j %j → %s', (text, args, expected) => {
    expect(codeSimplifiedDeclared(text, args)).toBe(expected);
  });
});
