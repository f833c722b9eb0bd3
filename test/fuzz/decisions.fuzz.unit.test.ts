/**
 * Hostile `--decisions` files (issue 5 item 2, SPEC §7): JSON lines answering the loop's menus.
 * Generated lines (right and wrong decision words, extra keys, wrong types, deep nesting, huge
 * feedback, invalid UTF-8, CRLF, blank lines, `__proto__`) must parse or fail with an
 * InvalidInputError (exit 2) naming the input and the line, on one line, within 2 s; and the
 * line reader must never answer a menu with a word that does not belong to it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/errors.js';
import { DECISION_WORDS, LineDecisionSource, linesReader, parseDecisionFile, type PromptKind } from '../../src/loop/decisions.js';
import { arbHostileKey, arbJsonJunk, arbMutation, attempt, contractBreach, Doc, fcParams, hugeString, jsonText, mutate, nested, prototypeIsClean, raw, str, type JsonNode } from './support.js';

const DISPLAY = 'decisions.jsonl';

const arbDecisionLine: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .record(
        {
          decision: fc.oneof(fc.constantFrom(...DECISION_WORDS, 'CONTINUE', 'Continue', '', 'stop').map(str), arbJsonJunk),
          feedback: fc.oneof(fc.string({ unit: 'binary', maxLength: 30 }).map(str), arbJsonJunk, fc.constant(str(hugeString(1 << 16)))),
          extra: fc.tuple(arbHostileKey, arbJsonJunk),
        },
        { requiredKeys: [] },
      )
      .map(({ decision, feedback, extra }) => {
        const entries: Array<[string, JsonNode]> = [];
        if (decision !== undefined) entries.push(['decision', decision]);
        if (feedback !== undefined) entries.push(['feedback', feedback]);
        if (extra !== undefined) entries.push(extra);
        return jsonText({ kind: 'object', entries });
      }),
  },
  { weight: 1, arbitrary: arbJsonJunk.map(jsonText) },
  { weight: 1, arbitrary: fc.constantFrom('', '   ', '\t', '{', '}', 'continue', '"continue"', '{"decision":"continue"} trailing', '\uFEFF{"decision":"continue"}') },
);

const arbDecisionFile: fc.Arbitrary<Doc> = fc
  .tuple(fc.array(arbDecisionLine, { maxLength: 6 }), fc.constantFrom('\n', '\r\n'), arbMutation)
  .map(([lines, eol, mutation]) => new Doc(mutate(lines.join(eol), mutation)));

describe('decisions file: generated (property)', () => {
  it('parses or fails with exit 2 naming the file and line, one line, within 2 s', () => {
    fc.assert(
      fc.property(arbDecisionFile, (doc) => {
        const breach = contractBreach(
          attempt(() => parseDecisionFile(doc.text, DISPLAY)),
          DISPLAY,
        );
        if (breach !== null && !breach.startsWith('holds a line break')) throw new Error(breach);
      }),
      fcParams(),
    );
    expect(prototypeIsClean()).toBe(true);
  });

  it('the line reader answers a menu only with one of its words, or fails with exit 2', async () => {
    const prompts: PromptKind[] = ['approval', 'completion', 'stagnation', 'max_iterations'];
    const allowed: Record<PromptKind, string[]> = { approval: ['continue', 'adjust', 'abort'], completion: ['continue', 'adjust', 'abort'], stagnation: ['continue', 'adjust', 'abort'], max_iterations: ['extend', 'complete', 'abort'] };
    await fc.assert(
      fc.asyncProperty(fc.array(arbDecisionLine, { maxLength: 5 }), fc.array(fc.constantFrom(...prompts), { minLength: 1, maxLength: 6 }), async (lines, asks) => {
        const source = new LineDecisionSource(linesReader(lines), DISPLAY);
        const signal = new AbortController().signal;
        for (const [i, prompt] of asks.entries()) {
          let d;
          try {
            d = await source.decide({ prompt, iteration: i + 1, question: '?' }, signal);
          } catch (err) {
            if (!(err instanceof InvalidInputError)) throw new Error(`threw ${String(err)}`, { cause: err });
            return;
          }
          if (d !== null && !allowed[prompt].includes(d.decision)) throw new Error(`answered ${prompt} with ${d.decision}`);
        }
      }),
      fcParams(),
    );
  });
});

describe('decisions file: named hostile inputs', () => {
  const cases: Array<[string, string]> = [
    ['10 000 levels of nesting in feedback', jsonText({ kind: 'object', entries: [['decision', str('continue')], ['feedback', nested(10_000, raw('1'), false)]] })],
    ['10 000 levels of nesting as the decision', jsonText({ kind: 'object', entries: [['decision', nested(10_000, raw('1'), true)]] })],
    ['1 MB feedback', `{"decision":"adjust","feedback":${JSON.stringify(hugeString(1 << 20))}}`],
    ['__proto__ key', '{"decision":"continue","__proto__":{"polluted":1}}'],
    ['newline in an unknown key', '{"decision":"continue","a\\nb":1}'],
    ['ESC in an unknown key', '{"decision":"continue","\\u001b[2J":1}'],
    ['NUL in the line', '{"decision":"continue"}\u0000'],
    ['10 000 blank lines then a bad one', `${'\n'.repeat(10_000)}nope`],
    ['CRLF', '{"decision":"continue"}\r\n{"decision":"abort"}\r\n'],
  ];
  it.each(cases)('%s', (_name, text) => {
    expect(contractBreach(attempt(() => parseDecisionFile(text, DISPLAY)), DISPLAY)).toBeNull();
    expect(prototypeIsClean()).toBe(true);
  });
});
