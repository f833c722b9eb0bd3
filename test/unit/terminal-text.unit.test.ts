/** Text for a terminal: control sequences from the model or its tools never reach it (table tests). */
import { describe, expect, it } from 'vitest';
import { costGrowth } from '../support/cost-growth.js';
import { Output } from '../../src/cli/output.js';
import { jsonLine, terminalSafe, unfinishedSequenceAt } from '../../src/cli/terminal-text.js';

const ESC = '\u001b';
const BEL = '\u0007';

describe('terminalSafe', () => {
  it.each([
    ['plain text', 'plain text', 'plain text'],
    ['tabs and newlines stay', 'a\tb\nc', 'a\tb\nc'],
    ['unicode stays', 'é 🚀 日本', 'é 🚀 日本'],
    ['CRLF becomes LF', 'a\r\nb', 'a\nb'],
    ['a lone CR (overwrites the line) goes', 'rm -rf ~\rls -la', 'rm -rf ~ls -la'],
    ['backspace goes', 'rm\b\bls', 'rmls'],
    ['BEL goes', `ding${BEL}`, 'ding'],
    ['SGR colour', `${ESC}[31mred${ESC}[0m`, 'red'],
    ['clear screen, cursor home', `${ESC}[2J${ESC}[Hx`, 'x'],
    ['private-mode CSI', `${ESC}[?1049h${ESC}[?25l!`, '!'],
    ['OSC 52 clipboard write, BEL-terminated', `a${ESC}]52;c;ZWNobyBwd25lZA==${BEL}b`, 'ab'],
    ['OSC 0 title, ST-terminated', `a${ESC}]0;owned${ESC}\\b`, 'ab'],
    ['OSC 8 hyperlink keeps its text', `${ESC}]8;;https://evil.example${ESC}\\click${ESC}]8;;${ESC}\\`, 'click'],
    ['DCS string', `x${ESC}Pq#0;2;0;0;0${ESC}\\y`, 'xy'],
    ['APC string', `x${ESC}_payload${ESC}\\y`, 'xy'],
    ['reset (ESC c) and charset (ESC ( 0)', `${ESC}c${ESC}(0q`, 'q'],
    ['C1 CSI', 'a\u009b31mb', 'ab'],
    ['C1 OSC with C1 ST', 'a\u009d52;c;eA==\u009cb', 'ab'],
    ['other C1 and DEL', 'a\u0085\u008e\u007fb', 'ab'],
    ['NUL and other C0', 'a\u0000\u0001\u000b\u000c\u001fb', 'ab'],
    ['an unterminated OSC: the escape goes, the text stays', `a${ESC}]52;c;QUFB`, 'a52;c;QUFB'],
    ['an unterminated OSC never swallows the next line', `a${ESC}]0;x\nsecond line${BEL}`, 'a0;x\nsecond line'],
    ['a lone ESC', `a${ESC}`, 'a'],
  ])('%s', (_what, input, expected) => {
    expect(terminalSafe(input)).toBe(expected);
    expect(terminalSafe(terminalSafe(input))).toBe(expected);
  });

  it('stays linear on a flood of unterminated introducers', async () => {
    const flood = (n: number): string => `${ESC}]${'a'.repeat(10)}\u009d`.repeat(n);
    expect(terminalSafe(flood(50_000))).not.toContain(ESC);
    expect(terminalSafe(flood(50_000))).not.toContain('\u009d');
    // One flood of 32 000 against 16 of 2 000: linear costs about the same (~1), quadratic 16×.
    const inputs = new Map([2_000, 32_000].map((n) => [n, flood(n)]));
    const growth = await costGrowth((n) => terminalSafe(inputs.get(n) ?? ''), 2_000, 32_000);
    expect(growth.ratio, growth.text).toBeLessThan(4);
  });
});

describe('unfinishedSequenceAt', () => {
  it.each([
    ['no escape', 'abc', 3],
    ['a finished sequence', `a${ESC}[31mb`, 7],
    ['a lone ESC at the end', `ab${ESC}`, 2],
    ['a CSI without its final byte', `ab${ESC}[3`, 2],
    ['an open OSC', `ab${ESC}]52;c;QUFB`, 2],
    ['an open OSC whose ST is half there', `ab${ESC}]0;t${ESC}`, 2],
    ['after a finished one', `${ESC}[0mab${ESC}[`, 6],
    ['an OSC broken by a newline is not waited for', `ab${ESC}]0;t\nc`, 9],
    ['an ESC followed by text is broken, not unfinished', `ab${ESC}[31;x`, 8],
  ])('%s', (_what, text, at) => {
    expect(unfinishedSequenceAt(text)).toBe(at);
  });
});

describe('jsonLine', () => {
  it.each([
    [{ a: 'plain' }, '{"a":"plain"}'],
    [{ a: `${ESC}[2J${BEL}` }, '{"a":"\\u001b[2J\\u0007"}'],
    [{ a: 'c1\u009b31m del\u007f' }, '{"a":"c1\\u009b31m del\\u007f"}'],
    [{ a: 'é 🚀' }, '{"a":"é 🚀"}'],
  ])('%j', (value, want) => {
    expect(jsonLine(value)).toBe(want);
    expect(JSON.parse(jsonLine(value))).toEqual(value);
  });
});

/** An Output in text mode writing into strings; stdout is a terminal (the answer streams as it comes). */
function textOutput(): { out: Output; stdout: () => string; stderr: () => string } {
  let stdout = '';
  let stderr = '';
  const stream = (append: (s: string) => void, isTTY: boolean): NodeJS.WriteStream =>
    ({ isTTY, write: (s: string, cb?: () => void) => (append(s), cb?.(), true) }) as unknown as NodeJS.WriteStream;
  const out = new Output({ mode: 'text', quiet: false, color: false, stdout: stream((s) => (stdout += s), true), stderr: stream((s) => (stderr += s), false), env: {} });
  return { out, stdout: () => stdout, stderr: () => stderr };
}

describe('Output (text mode)', () => {
  const ANSWER = `Done.${ESC}]52;c;cm0gLXJmIH4=${BEL} Title${ESC}]0;pwned${ESC}\\ ${ESC}[2Jcleared \u009b1mbold\u009b0m end`;

  it('removes sequences from the streamed answer however it is split', () => {
    const want = `${terminalSafe(ANSWER)}\n`;
    expect(want).toBe('Done. Title cleared bold end\n');
    for (const size of [1, 2, 3, 5, 8, 13]) {
      const { out, stdout } = textOutput();
      for (let i = 0; i < ANSWER.length; i += size) out.event({ type: 'text_delta', text: ANSWER.slice(i, i + size), iteration: 1 });
      out.event({ type: 'stream_end', stop_reason: 'completed', text: ANSWER, iterations: 1, usage: { prompt_tokens: 1, completion_tokens: 1 } });
      expect(stdout(), `pieces of ${size}`).toBe(want);
    }
  });

  it('prints an unfinished sequence at the end without its controls', () => {
    const { out, stdout } = textOutput();
    out.event({ type: 'text_delta', text: `ok ${ESC}]52;c;QUFB`, iteration: 1 });
    out.event({ type: 'stream_end', stop_reason: 'completed', text: '', iterations: 1, usage: { prompt_tokens: 1, completion_tokens: 1 } });
    expect(stdout()).toBe('ok 52;c;QUFB\n');
  });

  it('removes sequences from warnings on stderr', () => {
    const { out, stderr } = textOutput();
    out.event({ type: 'warning', code: 'shell_denied', message: `shell command denied: ${ESC}]52;c;eA==${BEL}rm -rf /\rls` });
    expect(stderr()).toBe('warning: shell command denied: rm -rf /ls\n');
  });
});
