/**
 * Hostile task files (issue 5 item 2, SPEC §6): YAML built from the task schema's vocabulary
 * with every YAML feature an attacker reaches for — anchors and aliases (billion laughs), tags
 * (`!!js/function`, `!!binary`, `!!python/object`, custom), merge keys, multi-document streams,
 * directives, tabs, deep nesting, huge scalars, complex keys — then damaged as bytes. Each must
 * give a task or problems (never a throw from `parseTaskText`), `loadTaskFile` must throw only
 * TaskFileError (exit 2) naming the file, one line per problem, in under 2 s.
 */
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costGrowth } from '../support/cost-growth.js';
import { InvalidInputError } from '../../src/errors.js';
import { loadTaskFile, MAX_TASK_FILE_BYTES, parseTaskText, TaskFileError, validateTaskFile, formatTaskProblems } from '../../src/loop/task-file.js';
import { arbMutation, attempt, contractBreach, Doc, fcParams, hugeString, HOSTILE_KEYS, HOSTILE_STRINGS, INPUT_BUDGET_MS, messageProblem, mutate, preview, prototypeIsClean, scratchDir } from './support.js';

const DISPLAY = 'tasks/t.yaml';

let dir: { root: string; cleanup(): void };
let file: string;
beforeAll(() => {
  dir = scratchDir('tasks');
  fs.mkdirSync(path.join(dir.root, 'tasks'));
  file = path.join(dir.root, DISPLAY);
});
afterAll(() => dir.cleanup());

// ---------------------------------------------------------------------------------------------
// YAML text generation.

/** A YAML key, plain when safe, else double-quoted (JSON strings are valid YAML double-quoted scalars). */
function yamlKey(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? key : JSON.stringify(key);
}

/** Scalars as written in YAML: plain, quoted, tagged, anchored, special floats. */
const SCALARS: readonly string[] = [
  'x',
  'fix the tests',
  '""',
  "''",
  '~',
  'null',
  'true',
  'no',
  'yes',
  '0',
  '-1',
  '3',
  '8',
  '20',
  '21',
  '600',
  '1.5',
  '1e309',
  '.inf',
  '-.inf',
  '.nan',
  '0x10',
  '0o17',
  '123456789012345678901234567890',
  '2001-12-14',
  '2001-12-14t21:59:43.10-05:00',
  '30m',
  '8h',
  '99999999999999999999h',
  'npm test',
  '!!str 5',
  '!!int "5"',
  '!!float x',
  '!!null ""',
  '!!bool maybe',
  '!!binary aGVsbG8=',
  '!!timestamp 2001-12-14',
  '!!js/function "function () { globalThis.navi_pwned = 1 }"',
  '!!js/regexp /x/',
  '!!js/undefined ""',
  '!!python/object:os.system ls',
  '!foo bar',
  '!<tag:yaml.org,2002:str> x',
  '&a x',
  '*a',
  '<<',
  '|',
  '>-',
  '"\\u0000"',
  '"\\x1b[2J"',
  '"a\\nb"',
  "'it''s'",
  '@reserved',
  '`reserved',
  '%',
  '- x',
  'a: b',
  '[x',
  '{x',
];

const arbScalar: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...SCALARS) },
  { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_STRINGS).map((s) => JSON.stringify(s)) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }).map((s) => JSON.stringify(s)) },
);

/** A flow collection (one line): usable as any value. */
const arbFlow: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    arbScalar,
    fc.array(tie('value'), { maxLength: 3 }).map((items) => `[${items.join(', ')}]`),
    fc
      .array(fc.tuple(fc.oneof(fc.constantFrom('name', 'run', 'timeout_s', 'max_iterations', 'never_pause_on_stagnation', 'max_tokens', 'deadline'), fc.constantFrom(...HOSTILE_KEYS)), tie('value')), { maxLength: 3 })
      .map((entries) => `{${entries.map(([k, v]) => `${yamlKey(k)}: ${v}`).join(', ')}}`),
  ),
})).value;

const CHECK_KEYS = ['name', 'run', 'timeout_s'];
const LOOP_KEYS = ['enabled', 'max_iterations', 'stagnation_threshold', 'exit_requires_explicit_signal', 'show_status_block', 'iteration_approval', 'periodic_interval', 'never_pause_on_stagnation', 'stagnation_diversify_strategy'];

/** A block mapping of `keys` (and a hostile one now and then) indented by `indent`. */
function arbBlockMap(keys: readonly string[], indent: string): fc.Arbitrary<string> {
  const entry = fc.oneof(
    { weight: 6, arbitrary: fc.tuple(fc.constantFrom(...keys), arbFlow) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...HOSTILE_KEYS), arbFlow) },
  );
  return fc.array(entry, { maxLength: keys.length }).map((entries) => entries.map(([k, v]) => `${indent}${yamlKey(k)}: ${v}\n`).join(''));
}

/** The value of one top-level task key, in block or flow style. */
function arbTopValue(key: string): fc.Arbitrary<string> {
  switch (key) {
    case 'prompt':
      return fc.oneof(
        arbFlow.map((v) => ` ${v}\n`),
        fc.constantFrom('Make npm test pass.', 'just do this once', 'x\n  y', '\t\ttabbed', '').map((t) => ` |\n  ${t}\n`),
        fc.constantFrom(1 << 10, 1 << 16).map((n) => ` ${JSON.stringify(hugeString(n))}\n`),
      );
    case 'loop':
      return fc.oneof(arbBlockMap(LOOP_KEYS, '  ').map((b) => `\n${b}`), arbFlow.map((v) => ` ${v}\n`));
    case 'checks':
      return fc.oneof(
        fc.array(arbBlockMap(CHECK_KEYS, '    '), { maxLength: 3 }).map((items) => `\n${items.map((m) => `  -\n${m}`).join('')}`),
        arbFlow.map((v) => ` ${v}\n`),
      );
    case 'ticket':
      return fc.oneof(arbBlockMap(['run'], '  ').map((b) => `\n${b}`), arbFlow.map((v) => ` ${v}\n`));
    case 'budget':
      return fc.oneof(arbBlockMap(['max_tokens', 'deadline'], '  ').map((b) => `\n${b}`), arbFlow.map((v) => ` ${v}\n`));
    default:
      return arbFlow.map((v) => ` ${v}\n`);
  }
}

const TASK_KEYS = ['name', 'prompt', 'profile', 'cwd', 'loop_mode', 'loop', 'checks', 'ticket', 'budget'];

/** Whole-document tricks added before, after or instead of the generated body. */
const EXTRAS: readonly string[] = [
  '',
  '---\n',
  '...\n',
  '%YAML 1.2\n---\n',
  '%TAG ! tag:yaml.org,2002:\n---\n',
  '---\nprompt: second document\n',
  '# comment only\n',
  'x: &a [1, 2]\ny: *a\n',
  'loop:\n  <<: {max_iterations: 3}\n',
  'loop:\n\tmax_iterations: 3\n',
  '? [a, b]\n: 1\n',
  '? {a: 1}\n: 1\n',
  '__proto__: {polluted: 1}\n',
  'loop: {__proto__: {polluted: 1}}\n',
  'prompt: x\nprompt: y\n',
  '- a\n- b\n',
  '"unterminated\n',
  '\uFEFF',
];

const arbTaskYaml: fc.Arbitrary<Doc> = fc
  .tuple(
    fc.array(fc.constantFrom(...TASK_KEYS).chain((k) => arbTopValue(k).map((v) => `${k}:${v}`)), { maxLength: 7 }),
    fc.constantFrom(...EXTRAS),
    fc.constantFrom('before', 'after', 'none'),
    arbMutation,
  )
  .map(([lines, extra, where, mutation]) => {
    const body = lines.join('');
    const text = where === 'before' ? extra + body : where === 'after' ? body + extra : body;
    return new Doc(mutate(text, mutation));
  });

// ---------------------------------------------------------------------------------------------

/** The contract for one document: parse, validate from disk, load; returns the breach or null. */
function check(doc: Doc): string | null {
  const parsed = attempt(() => parseTaskText(doc.text, { display: DISPLAY, file }));
  if (!parsed.ok) return `parseTaskText threw ${String(parsed.error)} (it must never throw)`;
  if (parsed.ms > INPUT_BUDGET_MS) return `parseTaskText took ${Math.round(parsed.ms)} ms`;
  for (const line of formatTaskProblems(DISPLAY, parsed.value.problems)) {
    const problem = messageProblem(line, DISPLAY);
    if (problem !== null) return `problem line ${problem}`;
  }
  if (parsed.value.task === undefined && parsed.value.problems.length === 0) return 'neither a task nor a problem';
  const task = parsed.value.task;
  if (task?.deadlineMs !== undefined && !Number.isFinite(new Date(Date.now() + task.deadlineMs).getTime())) {
    return `accepted a deadline no clock can reach: ${task.deadline ?? ''} (${task.deadlineMs} ms)`;
  }
  fs.writeFileSync(file, doc.content);
  const loaded = attempt(() => loadTaskFile(file, DISPLAY));
  if (!loaded.ok && !(loaded.error instanceof TaskFileError)) return `loadTaskFile threw ${String(loaded.error)}`;
  return contractBreach(loaded, DISPLAY);
}

describe('task YAML: generated and mutated (property)', () => {
  it('parseTaskText never throws; loadTaskFile gives a task or a TaskFileError naming the file, one line per problem, within 2 s', () => {
    fc.assert(
      fc.property(arbTaskYaml, (doc) => {
        const breach = check(doc);
        if (breach !== null) throw new Error(breach);
      }),
      fcParams(),
    );
    expect(prototypeIsClean()).toBe(true);
    expect((globalThis as Record<string, unknown>).navi_pwned).toBeUndefined();
  }, 90_000);
});

/** A billion-laughs document: each level nine aliases of the previous one. */
function billionLaughs(levels: number): string {
  const lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i <= levels; i++) lines.push(`a${i}: &a${i} [${Array.from({ length: 9 }, () => `*a${i - 1}`).join(',')}]`);
  return `${lines.join('\n')}\nprompt: x\n`;
}

const NAMED: Array<[string, string | Buffer]> = [
  ['billion laughs (9 levels of aliases)', billionLaughs(9)],
  ['alias to a mapping through a merge key', 'base: &b {max_iterations: 3}\nloop:\n  <<: *b\nprompt: x\n'],
  ['10 000 levels of flow sequences', `prompt: x\nloop: ${'['.repeat(10_000)}${']'.repeat(10_000)}\n`],
  ['10 000 levels of flow mappings', `prompt: x\nloop: ${'{a: '.repeat(10_000)}1${'}'.repeat(10_000)}\n`],
  ['5 000 levels of block mappings', `prompt: x\n${Array.from({ length: 5_000 }, (_, i) => `${' '.repeat(i)}k:`).join('\n')}\n`],
  ['1 MB prompt', `prompt: ${JSON.stringify(hugeString(MAX_TASK_FILE_BYTES - 64))}\n`],
  ['1 MB key', `${'k'.repeat(MAX_TASK_FILE_BYTES - 64)}: 1\nprompt: x\n`],
  ['!!js/function', 'prompt: !!js/function "function () { globalThis.navi_pwned = 1 }"\n'],
  ['!!binary', 'prompt: !!binary aGVsbG8=\n'],
  ['!!python/object', 'prompt: !!python/object:os.system ls\n'],
  ['custom tag', 'prompt: !foo bar\n'],
  ['!!set', 'prompt: !!set {a, b}\n'],
  ['timestamp', 'prompt: 2001-12-14t21:59:43.10-05:00\n'],
  ['merge key', 'prompt: x\nloop:\n  <<: {max_iterations: 3}\n'],
  ['multi-document stream', 'prompt: a\n---\nprompt: b\n'],
  ['empty documents', '---\n---\n'],
  ['document end marker only', '...\n'],
  ['tab indentation', 'prompt: x\nloop:\n\tmax_iterations: 3\n'],
  ['NUL byte', 'prompt: a\u0000b\n'],
  ['invalid UTF-8', Buffer.concat([Buffer.from('prompt: '), Buffer.from([0xff, 0xfe, 0xc3, 0x28]), Buffer.from('\n')])],
  ['UTF-16 with BOM', Buffer.from('\uFEFFprompt: x\n', 'utf16le')],
  ['BOM', '\uFEFFprompt: x\n'],
  ['CRLF', 'prompt: x\r\nloop_mode: false\r\n'],
  ['complex key', '? [a, b]\n: 1\nprompt: x\n'],
  ['__proto__ key', 'prompt: x\n__proto__: {polluted: 1}\n'],
  ['__proto__ in loop', 'prompt: x\nloop: {__proto__: {polluted: 1}}\n'],
  ['constructor.prototype in loop', 'prompt: x\nloop: {constructor: {prototype: {polluted: 1}}}\n'],
  ['newline and ESC in a key', '"a\\nb\\u001b[2J": 1\nprompt: x\n'],
  ['.inf timeout', 'prompt: x\nchecks: [{name: a, run: b, timeout_s: .inf}]\n'],
  ['.nan timeout', 'prompt: x\nchecks: [{name: a, run: b, timeout_s: .nan}]\n'],
  ['deadline beyond any clock', 'prompt: x\nbudget: {deadline: 99999999999999999999h}\n'],
  ['cwd with NUL escape', 'prompt: x\ncwd: "\\0"\n'],
  ['500 checks with one duplicate name each', `prompt: x\nchecks:\n${Array.from({ length: 500 }, () => '  - {name: a, run: b}').join('\n')}\n`],
];

describe('task YAML: named hostile inputs', () => {
  it.each(NAMED)('%s', (_name, content) => {
    expect(check(new Doc(content)), `input: ${preview(content)}`).toBeNull();
    expect(prototypeIsClean()).toBe(true);
    expect((globalThis as Record<string, unknown>).navi_pwned).toBeUndefined();
  });

  it('problems are located in linear time: one file of 12 000 unknown keys costs about what 16 of 750 do (a 1 MB file of keys must not take minutes)', async () => {
    // Each problem's line:column is found by scanning from the start of the file (lineColumnAt
    // per problem, src/loop/task-file.ts): quadratic. 20 000 keys take ~5 s; a 1 MB task file
    // holds ~150 000 (about 5 minutes of CPU for `navi tasks validate`: a hang to the user).
    const keys = (n: number): string => `${Array.from({ length: n }, (_, i) => `k${i}: 1`).join('\n')}\nprompt: x\n`;
    const texts = new Map([750, 12_000].map((n) => [n, keys(n)]));
    const growth = await costGrowth((n) => {
      const r = attempt(() => parseTaskText(texts.get(n) ?? '', { display: DISPLAY }));
      expect(r.ok && r.value.problems.length).toBe(n);
    }, 750, 12_000, { runs: 3 });
    // Linear ~1 (least of 3 interleaved runs, CPU time), quadratic ~16×.
    expect(growth.ratio, growth.text).toBeLessThan(4);
  }, 60_000);

  it('a file one byte over 1 MB is refused before it is read', () => {
    const content = `prompt: ${'x'.repeat(MAX_TASK_FILE_BYTES)}\n`;
    fs.writeFileSync(file, content);
    const r = attempt(() => validateTaskFile(file, DISPLAY));
    expect(r.ok && r.value.problems[0]?.message).toMatch(/limited to 1048576 bytes/);
    // Its size is named exactly: known from fstat, before any byte was read (a read stops one
    // byte past the cap and could only say "over 1048576").
    expect(r.ok && r.value.problems[0]?.message).toMatch(new RegExp(`^is ${content.length} bytes;`));
    // An 8 GB (sparse) file the same way: reading it first would take gigabytes.
    fs.truncateSync(file, 8 * 2 ** 30);
    const huge = attempt(() => validateTaskFile(file, DISPLAY));
    expect(huge.ok && huge.value.problems[0]?.message).toMatch(/^is 8589934592 bytes;/);
  });

  it('TaskFileError is an InvalidInputError with exit code 2', () => {
    fs.writeFileSync(file, 'nope: 1\n');
    const r = attempt(() => loadTaskFile(file, DISPLAY));
    expect(r.ok).toBe(false);
    const err = (r as { error: unknown }).error;
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as InvalidInputError).exitCode).toBe(2);
  });
});
