/**
 * Hostile `.nav-config.json` files (issue 5 item 2, SPEC §5): generated configs that follow the
 * schema loosely (right keys, wrong types, out-of-range numbers, 1 MB strings, 10 000 levels of
 * nesting, hostile keys), then damaged as text and bytes (truncation, BOMs, NUL, invalid UTF-8,
 * CRLF, stray punctuation). Each must load or fail with InvalidInputError (exit 2) naming the
 * file on one line, in under 2 s, without polluting Object.prototype.
 */
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { InvalidInputError } from '../../src/errors.js';
import { ITERATION_APPROVALS, DIVERSIFY_STRATEGIES } from '../../src/config/schema.js';
import {
  arbJsonJunk,
  arbMutation,
  arbShaped,
  attempt,
  contractBreach,
  Doc,
  fcParams,
  hugeString,
  jsonText,
  messageProblem,
  mutate,
  nested,
  preview,
  prototypeIsClean,
  raw,
  scratchDir,
  str,
  type JsonNode,
  type Shape,
} from './support.js';

/** The configuration schema's shape (src/config/schema.ts), as the generator's vocabulary. */
const CONFIG_SHAPE: Shape = {
  loop_mode: {
    enabled: 'bool',
    max_iterations: 'int',
    stagnation_threshold: 'int',
    exit_requires_explicit_signal: 'bool',
    show_status_block: 'bool',
    iteration_approval: { enum: ITERATION_APPROVALS },
    periodic_interval: 'int',
    never_pause_on_stagnation: 'bool',
    stagnation_diversify_strategy: { enum: DIVERSIFY_STRATEGIES },
  },
  llm: {
    host: 'host',
    model: 'str',
    num_ctx: 'int',
    think: 'bool',
    keep_alive: 'duration',
    temperature: 'num',
    first_chunk_timeout_s: 'num',
    chunk_timeout_s: 'num',
  },
  db: { url: 'url', data_dir: 'str' },
  default_profile: 'id',
  tools: { shell: { allow: 'strlist', deny: 'strlist', timeout_s: 'num', max_output_bytes: 'int' }, paths: 'strlist' },
  budget: { max_tokens: 'int', deadline: 'duration' },
  context_message_token_budget: 'int',
};

const DISPLAY = '.nav-config.json';

let dir: { root: string; cleanup(): void };
let file: string;
beforeAll(() => {
  dir = scratchDir('config');
  file = path.join(dir.root, DISPLAY);
});
afterAll(() => dir.cleanup());

/** Writes `content` as the project config and loads it, as every command does at start. */
function load(content: string | Buffer) {
  fs.writeFileSync(file, content);
  // HOME is the scratch dir too: no ~/.config/navi/config.json of the machine leaks in.
  return attempt(() => loadConfig({ cwd: dir.root, env: {}, home: dir.root }));
}


describe('.nav-config.json: generated and mutated (property)', () => {
  it('loads or fails with exit 2, no other error type, within 2 s', () => {
    fc.assert(
      fc.property(
        fc.tuple(arbShaped(CONFIG_SHAPE), arbMutation).map(([tree, mutation]) => new Doc(mutate(jsonText(tree), mutation))),
        (doc) => {
          const breach = contractBreach(load(doc.content), DISPLAY);
          // Format problems (control characters in messages) have their own property below.
          if (breach !== null && !breach.startsWith('holds a line break')) throw new Error(breach);
        },
      ),
      fcParams(),
    );
    expect(prototypeIsClean()).toBe(true);
  }, 60_000);

  it('arbitrary JSON of any shape (hostile keys, duplicates, odd numbers) never escapes as another error type', () => {
    fc.assert(
      fc.property(
        arbJsonJunk.map((tree) => new Doc(jsonText(tree))),
        (doc) => {
          const breach = contractBreach(load(doc.content), DISPLAY);
          if (breach !== null && !breach.startsWith('holds a line break')) throw new Error(breach);
        },
      ),
      fcParams(),
    );
    expect(prototypeIsClean()).toBe(true);
  }, 60_000);

  it('every message and warning is one line (no newline, ESC or other control character from a key or value)', () => {
    fc.assert(
      fc.property(
        arbShaped(CONFIG_SHAPE).map((tree) => new Doc(jsonText(tree))),
        (doc) => {
          const outcome = load(doc.content);
          // Other error types are the first property's business.
          const texts = outcome.ok ? outcome.value.warnings : outcome.error instanceof InvalidInputError ? [outcome.error.message] : [];
          for (const t of texts) {
            const problem = messageProblem(t, DISPLAY);
            if (problem !== null) throw new Error(problem);
          }
        },
      ),
      fcParams(),
    );
  }, 60_000);
});

/** Named inputs: each hostile idea once, so a failure says which. */
const NAMED: Array<[string, string | Buffer]> = [
  ['empty file', ''],
  ['whitespace only', ' \n\t\r\n'],
  ['BOM only', '\uFEFF'],
  ['BOM then config', '\uFEFF{"llm":{"num_ctx":4096}}'],
  ['two BOMs', '\uFEFF\uFEFF{}'],
  ['UTF-16LE with BOM', Buffer.from('\uFEFF{"llm":{}}', 'utf16le')],
  ['NUL byte in a string', '{"llm":{"model":"a\u0000b"}}'],
  ['escaped NUL in a string', '{"llm":{"model":"a\\u0000b"}}'],
  ['NUL between tokens', '{"llm"\u0000:{}}'],
  ['invalid UTF-8 in a key', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])],
  ['invalid UTF-8 in a value', Buffer.concat([Buffer.from('{"llm":{"model":"'), Buffer.from([0xc3, 0x28, 0xa0, 0xa1]), Buffer.from('"}}')])],
  ['lone surrogate escape', '{"llm":{"model":"\\uD800"}}'],
  ['duplicate keys (last wins, then validated)', '{"loop_mode":{"max_iterations":3,"max_iterations":50}}'],
  ['duplicate top-level blocks', '{"llm":{"num_ctx":1},"llm":"x"}'],
  ['1e309 (Infinity)', '{"llm":{"num_ctx":1e309}}'],
  ['-1e309', '{"llm":{"temperature":-1e309}}'],
  ['1e-400 (underflow to 0)', '{"llm":{"first_chunk_timeout_s":1e-400}}'],
  ['-0', '{"llm":{"temperature":-0}}'],
  ['NaN literal', '{"llm":{"num_ctx":NaN}}'],
  ['"NaN" string', '{"llm":{"num_ctx":"NaN"}}'],
  ['30-digit integer', '{"llm":{"num_ctx":123456789012345678901234567890}}'],
  ['hex literal', '{"llm":{"num_ctx":0x10}}'],
  ['trailing comma', '{"llm":{},}'],
  ['comment', '{"llm":{} // comment\n}'],
  ['single quotes', "{'llm':{}}"],
  ['top-level array', '[]'],
  ['top-level string', '"x"'],
  ['top-level null', 'null'],
  ['__proto__ at the top', '{"__proto__":{"polluted":1}}'],
  ['__proto__ in a block', '{"loop_mode":{"__proto__":{"polluted":1}}}'],
  ['__proto__ in tools', '{"tools":{"__proto__":{"polluted":1},"shell":{}}}'],
  ['constructor.prototype', '{"llm":{"constructor":{"prototype":{"polluted":1}}}}'],
  ['1 MB model name', `{"llm":{"model":${JSON.stringify(hugeString(1 << 20))}}}`],
  ['1 MB wrong-typed value', `{"llm":{"num_ctx":${JSON.stringify(hugeString(1 << 20))}}}`],
  ['1 MB key', `{${JSON.stringify('k'.repeat(1 << 20))}:1}`],
  ['1 MB of garbage', hugeString(1 << 20, '{[":,')],
  ['1 000 000 unclosed [', '['.repeat(1_000_000)],
  ['100 000 levels of [] (valid JSON)', '['.repeat(100_000) + ']'.repeat(100_000)],
  ['10 000 levels of [] in loop_mode', jsonText({ kind: 'object', entries: [['loop_mode', nested(10_000, raw('1'), false)]] })],
  ['10 000 levels of {} in loop_mode.enabled', jsonText({ kind: 'object', entries: [['loop_mode', { kind: 'object', entries: [['enabled', nested(10_000, raw('1'), true)]] }]] })],
  ['10 000 levels of [] in tools.shell.allow', jsonText({ kind: 'object', entries: [['tools', { kind: 'object', entries: [['shell', { kind: 'object', entries: [['allow', nested(10_000, raw('1'), false)]] }]] }]] })],
  ['10 000 levels of {} under an unknown key (ignored)', jsonText({ kind: 'object', entries: [['x', nested(10_000, raw('1'), true)]] })],
  ['newline in a nested key', '{"loop_mode":{"a\\nb":1}}'],
  ['ANSI escape in an unknown top-level key', '{"x\\u001b[2J\\u001b[H":1}'],
  ['never_pause without max_iterations (safety guard)', '{"loop_mode":{"never_pause_on_stagnation":true}}'],
  ['50 000 unknown top-level keys', `{${Array.from({ length: 50_000 }, (_, i) => `"k${i}":1`).join(',')}}`],
  ['deadline far beyond any timer', '{"budget":{"deadline":"99999999999999999999h"}}'],
];

/** Inputs whose message may not name the file: none. Inputs that must load: these. */
const MUST_LOAD = new Set(['BOM then config', '-0', '__proto__ at the top', '1 MB model name', '10 000 levels of {} under an unknown key (ignored)', '50 000 unknown top-level keys']);

describe('.nav-config.json: named hostile inputs', () => {
  it.each(NAMED)('%s', (name, content) => {
    const outcome = load(content);
    expect(contractBreach(outcome, DISPLAY), `input: ${preview(content)}`).toBeNull();
    if (MUST_LOAD.has(name)) expect(outcome.ok, outcome.ok ? '' : String(outcome.error)).toBe(true);
    if (outcome.ok) for (const w of outcome.value.warnings) expect(messageProblem(w, DISPLAY)).toBeNull();
    expect(prototypeIsClean()).toBe(true);
  });

  it('a non-finite number is shown as what was written, not as "null"', () => {
    const outcome = load('{"llm":{"num_ctx":1e309}}');
    expect(outcome.ok).toBe(false);
    // JSON.stringify(Infinity) is "null": the message says "(got null)" for a value that was not null.
    expect(String((outcome as { error: Error }).error.message)).not.toMatch(/\(got null\)/);
  });

  it("an invalid-JSON message is navi's own words, without V8's echo of the file content", () => {
    // V8 quotes the source around the error (`..."ef", "b": x}" is not valid JSON`); navi strips
    // the quote only when it starts at the first character, so a long file leaks ~10 characters
    // of whatever sits before the error (here the end of a key) into logs.
    const outcome = load('{"api_key": "sk-live-0123456789abcdef", "b": x}');
    expect(outcome.ok).toBe(false);
    const message = String((outcome as { error: Error }).error.message);
    expect(message).toMatch(/^\.nav-config\.json:1:46: invalid JSON: Unexpected token 'x'/);
    expect(message).not.toContain('is not valid JSON');
    expect(message).not.toContain('ef"');
  });
});

describe('deep nesting in every leaf of the schema', () => {
  // Which leaves overflow the stack when a problem is rendered: each path once.
  const leaves: string[][] = [];
  const walk = (shape: Shape, prefix: string[]): void => {
    for (const [key, spec] of Object.entries(shape)) {
      if (typeof spec === 'object' && !('enum' in spec && Array.isArray(spec.enum))) walk(spec as Shape, [...prefix, key]);
      else leaves.push([...prefix, key]);
    }
  };
  walk(CONFIG_SHAPE, []);

  it('no leaf overflows the stack when its problem is rendered (10 000 nested arrays each)', () => {
    const breaches: string[] = [];
    for (const keys of leaves) {
      let node: JsonNode = nested(10_000, str('x'), false);
      for (const key of [...keys].reverse()) node = { kind: 'object', entries: [[key, node]] };
      const breach = contractBreach(load(jsonText(node)), DISPLAY);
      if (breach !== null) breaches.push(`${keys.join('.')}: ${breach}`);
    }
    expect(breaches).toEqual([]);
  });
});
