/**
 * Shared pieces of the hostile-input fuzz suite (issue 5, item 2): the contract every parser of
 * a user file must keep, and fast-check arbitraries that build hostile JSON and YAML *text*
 * (not objects), so duplicate keys, `__proto__` keys, number literals JavaScript cannot hold,
 * raw control characters and deep nesting reach the parser exactly as a file would.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { InvalidInputError } from '../../src/errors.js';

/** One input may take this long, in CPU time (the issue: "never a hang"). Parsing is synchronous, so it is measured, not interrupted. */
export const INPUT_BUDGET_MS = 2_000;

/** Runs per property; several properties per file keep each file under a few seconds. */
export const RUNS = Number(process.env.NAVI_FUZZ_RUNS ?? 400);

/** A fixed seed by default so a failure reproduces; NAVI_FUZZ_SEED=random explores. */
export function fcParams(numRuns = RUNS): fc.Parameters<unknown> {
  const seed = process.env.NAVI_FUZZ_SEED;
  return {
    numRuns,
    ...(seed === 'random' ? {} : { seed: seed === undefined ? 0x5eed_f00d : Number(seed) }),
    // Shrinking a 1 MB input is slow and rarely helps; the counterexample is printed either way.
    endOnFailure: false,
  };
}

/** Control characters (C0, DEL, C1): a one-line message holds none (JSON.stringify leaves U+2028/9 raw; terminals do not break on them). */
// eslint-disable-next-line no-control-regex
const NOT_ONE_LINE = /[\u0000-\u001f\u007f-\u009f]/;

/** What went wrong with one message, or null when it keeps the contract. */
export function messageProblem(message: string, display: string): string | null {
  if (!message.includes(display)) return `does not name ${display}: ${JSON.stringify(message.slice(0, 200))}`;
  if (NOT_ONE_LINE.test(message)) return `holds a line break or control character: ${JSON.stringify(message.slice(0, 300))}`;
  if (/\n\s+at /.test(message)) return 'holds a stack trace';
  return null;
}

/** The outcome of one parse: ok, or the error it threw (anything); `ms` is CPU time. */
export type Outcome<T> = { ok: true; value: T; ms: number } | { ok: false; error: unknown; ms: number };

/** CPU milliseconds this process has used: unlike wall time, not inflated when other processes load the machine. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Calls `fn`, measuring the CPU time it takes; never throws. */
export function attempt<T>(fn: () => T): Outcome<T> {
  const started = cpuMs();
  try {
    const value = fn();
    return { ok: true, value, ms: cpuMs() - started };
  } catch (error) {
    return { ok: false, error, ms: cpuMs() - started };
  }
}

/**
 * The contract of issue 5 item 2 for one input: loaded, or an InvalidInputError (exit 2) whose
 * message names the file on one line; never another error type; within the time budget.
 * Returns a description of the breach (for `expect(...).toBeNull()`, so the report shows it).
 */
export function contractBreach(outcome: Outcome<unknown>, display: string): string | null {
  if (outcome.ms > INPUT_BUDGET_MS) return `took ${Math.round(outcome.ms)} ms (budget ${INPUT_BUDGET_MS} ms)`;
  if (outcome.ok) return null;
  const err = outcome.error;
  if (!(err instanceof InvalidInputError)) {
    const name = err instanceof Error ? err.constructor.name : typeof err;
    const message = err instanceof Error ? err.message : String(err);
    return `threw ${name} (not InvalidInputError, so not exit 2): ${message.slice(0, 200)}`;
  }
  if (err.exitCode !== 2) return `exit code ${err.exitCode}, not 2`;
  return messageProblem(err.message, display);
}

/** `({}).polluted` and friends: set by a prototype-pollution bug. */
export function prototypeIsClean(): boolean {
  const probe: Record<string, unknown> = {};
  return probe.polluted === undefined && !('polluted' in Object.prototype) && !('polluted' in Array.prototype);
}

/** A private scratch directory, removed by `cleanup`. */
export function scratchDir(prefix: string): { root: string; cleanup(): void } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `navi-fuzz-${prefix}-`));
  return { root, cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}

// ---------------------------------------------------------------------------------------------
// Hostile leaves shared by JSON and YAML.

/** Keys that attack the object model or the message format rather than the schema. */
export const HOSTILE_KEYS: readonly string[] = [
  '__proto__',
  'constructor',
  'prototype',
  'hasOwnProperty',
  'toString',
  'valueOf',
  '',
  ' ',
  'a.b',
  'a[0]',
  '<<',
  'a\nb',
  'x\u001b[31mred\u001b[0m',
  '\u0000',
  '\u2028',
  '\uFEFF',
  'é',
  '🚀',
  'k'.repeat(300),
];

/** Strings that stress validators and message rendering. */
export const HOSTILE_STRINGS: readonly string[] = [
  '',
  ' ',
  '\t',
  'NaN',
  'Infinity',
  '-0',
  '1e309',
  'true',
  'null',
  '0x10',
  '../../../../etc/passwd',
  '/etc/passwd',
  '~',
  '~/x',
  'http://[::1',
  'javascript:alert(1)',
  'postgres://u:p@h/d',
  '30m',
  '-1',
  '99999999999999999999h',
  '1h30m',
  'a\u0000b',
  'line\nbreak',
  '\u001b[2J\u001b[H',
  '\r\n',
  '\uD800',
  '\uFFFD',
  '%s%n%x',
  '${HOME}',
  '$(touch /tmp/navi-fuzz-pwned)',
];

/** Number literals as they appear in text (JSON allows all of them; some are not finite in JS). */
export const NUMBER_LITERALS: readonly string[] = [
  '0',
  '-0',
  '1',
  '2',
  '3',
  '5',
  '20',
  '21',
  '500',
  '501',
  '-1',
  '0.5',
  '1.5',
  '2.0001',
  '65536',
  '1e309',
  '-1e309',
  '1e-400',
  '123456789012345678901234567890',
  '9007199254740993',
  '4294967296',
];

/** A string of `length` code units drawn from a small alphabet (cheap to build at 1 MB). */
export function hugeString(length: number, alphabet = 'xé🚀"\\'): string {
  const unit = alphabet.repeat(Math.ceil(64 / alphabet.length)).slice(0, 64);
  return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
}

export const arbHostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 1, arbitrary: fc.constantFrom(1 << 10, 1 << 16, 1 << 20).map((n) => hugeString(n)) },
);

export const arbHostileKey: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_KEYS) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
);

// ---------------------------------------------------------------------------------------------
// JSON text. A tiny syntax tree serialised by hand, so keys can repeat and be `__proto__`.

export type JsonNode =
  | { kind: 'object'; entries: Array<[string, JsonNode]> }
  | { kind: 'array'; items: JsonNode[] }
  | { kind: 'raw'; text: string };

export function jsonText(node: JsonNode): string {
  // Iterative for deep trees (10 000 levels would overflow a recursive serialiser).
  const out: string[] = [];
  const stack: Array<JsonNode | string> = [node];
  while (stack.length > 0) {
    const top = stack.pop() as JsonNode | string;
    if (typeof top === 'string') {
      out.push(top);
      continue;
    }
    if (top.kind === 'raw') {
      out.push(top.text);
    } else if (top.kind === 'array') {
      out.push('[');
      const parts: Array<JsonNode | string> = [];
      top.items.forEach((item, i) => {
        if (i > 0) parts.push(',');
        parts.push(item);
      });
      parts.push(']');
      for (let i = parts.length - 1; i >= 0; i--) stack.push(parts[i] as JsonNode | string);
    } else {
      out.push('{');
      const parts: Array<JsonNode | string> = [];
      top.entries.forEach(([key, value], i) => {
        if (i > 0) parts.push(',');
        parts.push(`${JSON.stringify(key)}:`, value);
      });
      parts.push('}');
      for (let i = parts.length - 1; i >= 0; i--) stack.push(parts[i] as JsonNode | string);
    }
  }
  return out.join('');
}

export const raw = (text: string): JsonNode => ({ kind: 'raw', text });
export const str = (s: string): JsonNode => raw(JSON.stringify(s));

/** `depth` levels of `[` (or `{"a":`) around `leaf`. */
export function nested(depth: number, leaf: JsonNode, objects: boolean): JsonNode {
  let node = leaf;
  for (let i = 0; i < depth; i++) node = objects ? { kind: 'object', entries: [['a', node]] } : { kind: 'array', items: [node] };
  return node;
}

/** Any JSON value with hostile leaves and keys, shallow. */
export const arbJsonJunk: fc.Arbitrary<JsonNode> = fc.letrec<{ node: JsonNode }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(...NUMBER_LITERALS, 'true', 'false', 'null').map(raw),
    arbHostileString.map(str),
    fc.array(tie('node'), { maxLength: 4 }).map((items): JsonNode => ({ kind: 'array', items })),
    fc
      .array(fc.tuple(arbHostileKey, tie('node')), { maxLength: 4 })
      .map((entries): JsonNode => ({ kind: 'object', entries })),
  ),
})).node;

/** Deep nesting (up to 10 000 levels) around a leaf. */
export const arbDeep: fc.Arbitrary<JsonNode> = fc
  .tuple(fc.constantFrom(2, 50, 1_000, 5_000, 10_000), fc.boolean())
  .map(([depth, objects]) => nested(depth, raw('1'), objects));

/** Leaf kinds of the schemas under test. */
export type Leaf = 'bool' | 'int' | 'num' | 'str' | 'strlist' | 'enum' | 'duration' | 'url' | 'host' | 'id' | 'tools';

/** A value for a leaf of kind `leaf`: usually plausible, often wrong, sometimes absurd. */
export function arbLeaf(leaf: Leaf, enumValues: readonly string[] = []): fc.Arbitrary<JsonNode> {
  const plausible: fc.Arbitrary<JsonNode> = (() => {
    switch (leaf) {
      case 'bool':
        return fc.constantFrom('true', 'false').map(raw);
      case 'int':
      case 'num':
        return fc.constantFrom(...NUMBER_LITERALS).map(raw);
      case 'enum':
        return fc.constantFrom(...enumValues, 'NONE', '').map(str);
      case 'duration':
        return fc.constantFrom('30m', '8h', '1h30m', '90s', '0s', '8', '-1', '1.5h', '2d', '500ms', '99999999999999999999h', '30d').map(str);
      case 'url':
        return fc.constantFrom('postgres://u:p@127.0.0.1:1/x', 'postgresql://h/d', 'mysql://h/d', 'postgres:// space').map(str);
      case 'host':
        return fc.constantFrom('http://127.0.0.1:11434', '127.0.0.1:1', 'gpu-box', 'https://x.example', 'ftp://x', '::1', '[::1]:80').map(str);
      case 'id':
        return fc.constantFrom('default', 'coder', '.hidden', 'a/b', '../x', 'x y').map(str);
      case 'strlist':
      case 'tools':
        return fc
          .array(fc.oneof(fc.constantFrom('read_file', 'shell', 'rm *', '', 'Bad Name', 'x-y').map(str), arbJsonJunk), { maxLength: 4 })
          .map((items): JsonNode => ({ kind: 'array', items }));
      case 'str':
        return arbHostileString.map(str);
    }
  })();
  return fc.oneof({ weight: 6, arbitrary: plausible }, { weight: 2, arbitrary: arbJsonJunk }, { weight: 1, arbitrary: arbDeep });
}

/** A schema shape: leaves, nested objects, and `{enum}` leaves. */
export type Shape = { [key: string]: Leaf | Shape | { enum: readonly string[] } };

function isEnum(v: Shape[string]): v is { enum: readonly string[] } {
  return typeof v === 'object' && 'enum' in v && Array.isArray(v.enum);
}

/** An object following `shape` loosely: a random subset of its keys, sometimes a hostile key, sometimes a repeated one. */
export function arbShaped(shape: Shape): fc.Arbitrary<JsonNode> {
  const keys = Object.keys(shape);
  const valueFor = (key: string): fc.Arbitrary<JsonNode> => {
    const spec = shape[key] as Shape[string];
    if (typeof spec === 'string') return arbLeaf(spec);
    if (isEnum(spec)) return arbLeaf('enum', spec.enum);
    return fc.oneof({ weight: 5, arbitrary: arbShaped(spec) }, { weight: 1, arbitrary: arbJsonJunk });
  };
  const entry = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...keys).chain((k) => valueFor(k).map((v): [string, JsonNode] => [k, v])) },
    { weight: 1, arbitrary: fc.tuple(arbHostileKey, arbJsonJunk) },
  );
  return fc.array(entry, { maxLength: keys.length + 1 }).map((entries): JsonNode => ({ kind: 'object', entries }));
}

/** Text-level damage done to a serialised document: the kinds of corruption files really suffer. */
export type Mutation =
  | { kind: 'none' }
  | { kind: 'truncate'; at: number }
  | { kind: 'insert'; at: number; text: string }
  | { kind: 'bom'; count: number }
  | { kind: 'crlf' }
  | { kind: 'bytes'; at: number; bytes: number[] };

export const arbMutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Mutation>({ kind: 'none' }) },
  { weight: 1, arbitrary: fc.nat().map((at): Mutation => ({ kind: 'truncate', at })) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.nat(), fc.oneof(fc.constantFrom('\u0000', '\uFEFF', ',', '}', ']', '"', '\\', '\n', '\t', ':', '{', '[', '#', '&a', '*a', '!!', '---\n'), fc.string({ unit: 'binary', maxLength: 4 })))
      .map(([at, text]): Mutation => ({ kind: 'insert', at, text })),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }).map((count): Mutation => ({ kind: 'bom', count })) },
  { weight: 1, arbitrary: fc.constant<Mutation>({ kind: 'crlf' }) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.nat(),
        // Invalid UTF-8: lone continuation bytes, overlong forms, truncated sequences, surrogates, 0xFE/0xFF.
        fc.constantFrom([0x80], [0xc0, 0xaf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xfe], [0xff, 0xfe], [0xc3], [0xe2, 0x82]),
      )
      .map(([at, bytes]): Mutation => ({ kind: 'bytes', at, bytes: [...bytes] })),
  },
);

/**
 * A generated document: its text (or bytes), printed shortened when fast-check reports a
 * counterexample (a 1 MB input or a 10 000-level tree would drown the report, or overflow
 * fast-check's own printer).
 */
export class Doc {
  constructor(readonly content: string | Buffer) {}

  get text(): string {
    return typeof this.content === 'string' ? this.content : this.content.toString('utf8');
  }

  [fc.toStringMethod](): string {
    return preview(this.content);
  }
}

/** `content` as JSON, cut to a few hundred characters. */
export function preview(content: string | Buffer): string {
  const s = typeof content === 'string' ? content : content.toString('utf8');
  return JSON.stringify(s.length > 300 ? `${s.slice(0, 150)}…(${s.length} chars)…${s.slice(-100)}` : s);
}

/** Applies a mutation; the result is bytes, as a file on disk would be. */
export function mutate(text: string, m: Mutation): Buffer {
  const at = (n: number): number => (text.length === 0 ? 0 : n % (text.length + 1));
  switch (m.kind) {
    case 'none':
      return Buffer.from(text, 'utf8');
    case 'truncate':
      return Buffer.from(text.slice(0, at(m.at)), 'utf8');
    case 'insert':
      return Buffer.from(text.slice(0, at(m.at)) + m.text + text.slice(at(m.at)), 'utf8');
    case 'bom':
      return Buffer.from('\uFEFF'.repeat(m.count) + text, 'utf8');
    case 'crlf':
      return Buffer.from(text.replace(/\n/g, '\r\n'), 'utf8');
    case 'bytes': {
      const buf = Buffer.from(text, 'utf8');
      const i = buf.length === 0 ? 0 : m.at % (buf.length + 1);
      return Buffer.concat([buf.subarray(0, i), Buffer.from(m.bytes), buf.subarray(i)]);
    }
  }
}
