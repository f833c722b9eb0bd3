/**
 * Exit signals (SPEC §7.4): the `loop_signal` tool, or in the model's final text a
 * ```` ```pilot-signal ```` v2 fenced block or a `nav-signal:v3:{json}` line — navigator's two
 * grammars (nav_hook_lib/signals.py). A v3 line must own its line: optional indentation, an
 * optional comment wrapper (`<!-- … -->`, `// …`, `# …`) so it can be hidden from readers, the
 * prefix, one JSON object, and nothing after it. Prose around it, text after the JSON, unknown
 * `type`s and malformed JSON are not signals.
 *
 * `code_simplified` (the one indicator navigator leaves to the model) is declared with a
 * `"code_simplified": true` field in any signal of a known type (an `exit` or a `status`), or the
 * `code_simplified` argument of `loop_signal`.
 */
import { isRecord } from '../util/guards.js';

/** Signal types of the nav-signal v3 grammar; anything else is not a signal. */
export const SIGNAL_TYPES = ['exit', 'status', 'check', 'brief', 'defer'] as const;

/** A known signal type. */
export type SignalType = (typeof SIGNAL_TYPES)[number];

/** Where an exit signal came from. */
export type SignalSource = 'tool' | 'v2' | 'v3';

/** A signal found in text, normalized (v2 and v3 alike). */
export interface ParsedSignal {
  /** Grammar it was written in. */
  source: 'v2' | 'v3';
  /** Its type. */
  type: SignalType;
  /** Every field of the JSON object (including `type`, without `v`). */
  fields: Readonly<Record<string, unknown>>;
  /** Character offset in the text, for document order. */
  offset: number;
}

/** The exit signal of an iteration, normalized. */
export interface ExitSignal {
  /** True only for an accepted `type: "exit"` signal with success not false. */
  exit: boolean;
  /** The model's reason (empty when it gave none). */
  reason: string;
  /** Where it came from. */
  source: SignalSource;
  /** Why a signal was not taken as an exit (success false, zero tool calls); shown to the model next iteration. */
  rejected?: string;
  /** The signal declared `code_simplified: true`. */
  codeSimplified?: boolean;
}

/** The loop_signal tool's name, excluded from the tool calls that count as work. */
export const LOOP_SIGNAL_TOOL = 'loop_signal';

const V3_PREFIX = 'nav-signal:v3:';

/**
 * One v3 line: indentation, an optional opener, the prefix, a JSON object running to the last
 * `}` on the line, then only the matching closer (for `<!--`) and whitespace.
 */
const V3_LINE = /^[ \t]*(?:(<!--)[ \t]*|(?:\/\/|#)[ \t]*)?nav-signal:v3:(\{[^\n]*\})[ \t]*(-->)?[ \t]*$/;

/** A v2 fenced block, CRLF tolerated (navigator's reader does the same). */
const V2_BLOCK = /```pilot-signal\r?\n([\s\S]+?)\r?\n```/g;

function isSignalType(v: unknown): v is SignalType {
  return typeof v === 'string' && (SIGNAL_TYPES as readonly string[]).includes(v);
}

/** JSON text → fields of a known-type signal, or undefined (malformed, not an object, unknown type). */
function normalize(raw: string): { type: SignalType; fields: Record<string, unknown> } | undefined {
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!isRecord(data) || !isSignalType(data.type)) return undefined;
  const { v: _version, ...fields } = data;
  return { type: data.type, fields };
}

/** Every signal in `text`, v2 and v3, in document order. Never throws. */
export function parseSignals(text: string): ParsedSignal[] {
  const found: ParsedSignal[] = [];
  let offset = 0;
  // Split on \n only: a JSON string may hold U+2028, which JS's `m` flag would treat as a break.
  for (const rawLine of text.split('\n')) {
    const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
    if (line.includes(V3_PREFIX)) {
      const m = V3_LINE.exec(line);
      // A closer without the HTML opener (or after `//`/`#`) is trailing text, not a wrapper.
      if (m && (m[3] === undefined || m[1] !== undefined)) {
        const sig = normalize(m[2] ?? '');
        if (sig) found.push({ source: 'v3', ...sig, offset });
      }
    }
    offset += rawLine.length + 1;
  }
  for (const m of text.matchAll(V2_BLOCK)) {
    const sig = normalize((m[1] ?? '').replace(/\r/g, ''));
    if (sig) found.push({ source: 'v2', ...sig, offset: m.index });
  }
  return found.sort((a, b) => a.offset - b.offset);
}

function reasonOf(fields: Readonly<Record<string, unknown>>): string {
  return typeof fields.reason === 'string' ? fields.reason : '';
}

/**
 * An `exit` signal's verdict from its fields. A missing `success` counts as success (navigator's
 * own hook emits `{"type":"exit","reason":…}`); `success: false` — or anything but a boolean — is
 * a signal that the task is NOT done, so it is not an exit.
 */
function fromExitFields(fields: Readonly<Record<string, unknown>>, source: SignalSource): ExitSignal {
  const reason = reasonOf(fields);
  const simplified = fields.code_simplified === true ? { codeSimplified: true } : {};
  if (fields.success === undefined || fields.success === true) return { exit: true, reason, source, ...simplified };
  const why =
    fields.success === false
      ? 'the exit signal said success: false, so the task is not complete'
      : `the exit signal's "success" must be true or false (got ${JSON.stringify(fields.success)})`;
  return { exit: false, reason, source, rejected: why, ...simplified };
}

/**
 * The exit signal in the model's final text: the last `exit`-type signal in document order
 * (the model's final word wins), or null when there is none.
 */
export function exitSignalFromText(text: string): ExitSignal | null {
  const exits = parseSignals(text).filter((s) => s.type === 'exit');
  const last = exits[exits.length - 1];
  return last === undefined ? null : fromExitFields(last.fields, last.source);
}

/**
 * The exit signal of a `loop_signal` tool call (`{type: "exit", success, reason, code_simplified?}`),
 * or null when the arguments are not an exit signal (another type, not an object).
 */
export function exitSignalFromTool(args: unknown): ExitSignal | null {
  if (!isRecord(args) || args.type !== 'exit') return null;
  return fromExitFields(args, 'tool');
}

/** True when any signal in the final text or any loop_signal call declares `code_simplified: true`. */
export function codeSimplifiedDeclared(finalText: string, toolArgs: readonly unknown[] = []): boolean {
  return (
    parseSignals(finalText).some((s) => s.fields.code_simplified === true) ||
    toolArgs.some((a) => isRecord(a) && a.code_simplified === true)
  );
}

/**
 * Applies the runner's acceptance rule: an exit signal from an iteration with zero tool calls
 * (loop_signal itself not counted) is rejected — the model did no work it could be judging.
 * Non-exit signals pass through unchanged.
 */
export function acceptSignal(signal: ExitSignal | null, toolCallsThisIteration: number): ExitSignal | null {
  if (signal === null || !signal.exit || toolCallsThisIteration > 0) return signal;
  return {
    ...signal,
    exit: false,
    rejected:
      'the exit signal came from an iteration with no tool calls; verify the result with tools ' +
      '(run the checks, inspect the changes) in the same iteration you signal completion',
  };
}

/** What resolveExitSignal looks at for one iteration. */
export interface IterationSignals {
  /** Arguments of every loop_signal call this iteration, in call order. */
  toolArgs: readonly unknown[];
  /** The model's final text of the iteration. */
  finalText: string;
  /** Tool calls this iteration, not counting loop_signal. */
  toolCalls: number;
}

/**
 * The iteration's exit signal after acceptance. The final text comes after every tool call of
 * the turn, so a signal in it is the model's last word; otherwise the last loop_signal call.
 */
export function resolveExitSignal(it: IterationSignals): ExitSignal | null {
  let signal = exitSignalFromText(it.finalText);
  for (let i = it.toolArgs.length - 1; signal === null && i >= 0; i--) signal = exitSignalFromTool(it.toolArgs[i]);
  return acceptSignal(signal, it.toolCalls);
}
