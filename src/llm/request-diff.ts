/**
 * What changed between a recorded request and the one a replayed run makes: the first
 * difference, said the way a person fixing a prompt or a profile needs it — which setting,
 * which tool schema, which message (index and role) and the text around the first character
 * that differs. Pure: it reads two described requests and their blobs.
 */
import { isRecord } from '../util/guards.js';
import type { RequestRecord } from './recording-format.js';

/** A request and the blobs its ids point to. */
export interface RequestView {
  record: RequestRecord;
  blobs: ReadonlyMap<string, unknown>;
}

/** Characters shown before the first difference: enough to recognise the sentence. */
const BEFORE = 30;
/** Characters shown from the first difference on. */
const AFTER = 50;
/** Frame settings listed at most (the rest are counted). */
const MAX_SETTINGS = 3;

/** Lines describing the first difference between `recorded` and `now` (empty when they are equal). */
export function requestDiff(recorded: RequestView, now: RequestView): string[] {
  const a = recorded.record;
  const b = now.record;
  if (a.method !== b.method || a.path !== b.path) return [`recorded ${a.method} ${a.path}, now ${b.method} ${b.path}`];
  if (a.messages === undefined || b.messages === undefined) {
    if (a.body_text !== undefined || b.body_text !== undefined) return textDiff('body', a.body_text ?? '', b.body_text ?? '');
    return textDiff('body', JSON.stringify(a.body) ?? '', JSON.stringify(b.body) ?? '', true);
  }
  const frameA = recorded.blobs.get(a.frame ?? '');
  const frameB = now.blobs.get(b.frame ?? '');
  const settings = frameDiff(frameA, frameB, DERIVED_SETTINGS);
  if (settings.length > 0) return settings;
  const tools = toolsDiff(recorded, now);
  if (tools.length > 0) return tools;
  const messages = messagesDiff(recorded, now);
  if (messages.length > 0) return messages;
  return frameDiff(frameA, frameB);
}

/**
 * Settings navi derives from the rest of the request (the reply bound follows the prompt's
 * size): when they differ, a changed message or tool is the cause to show; alone, they are shown.
 */
const DERIVED_SETTINGS: ReadonlySet<string> = new Set(['options.num_predict']);

function frameDiff(a: unknown, b: unknown, ignore: ReadonlySet<string> = new Set()): string[] {
  const flatA = flatten(a);
  const flatB = flatten(b);
  const keys = [...new Set([...flatA.keys(), ...flatB.keys()])].filter((k) => !ignore.has(k) && flatA.get(k) !== flatB.get(k));
  if (keys.length === 0) return [];
  const lines = keys.slice(0, MAX_SETTINGS).map((k) => `setting ${k}: recorded ${flatA.get(k) ?? '(absent)'}, now ${flatB.get(k) ?? '(absent)'}`);
  if (keys.length > MAX_SETTINGS) lines.push(`(and ${keys.length - MAX_SETTINGS} more settings)`);
  return lines;
}

/** `{options: {num_ctx: 8}}` → `options.num_ctx` → `8` (values as JSON). */
function flatten(value: unknown, prefix = '', out = new Map<string, string>()): Map<string, string> {
  if (isRecord(value)) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix === '' ? k : `${prefix}.${k}`, out);
  } else if (prefix !== '') {
    out.set(prefix, JSON.stringify(value) ?? 'null');
  }
  return out;
}

function toolName(value: unknown): string {
  if (isRecord(value) && isRecord(value.function) && typeof value.function.name === 'string') return value.function.name;
  return '(unnamed)';
}

function toolsDiff(recorded: RequestView, now: RequestView): string[] {
  const idsA = recorded.record.tools ?? [];
  const idsB = now.record.tools ?? [];
  const namesA = idsA.map((id) => toolName(recorded.blobs.get(id)));
  const namesB = idsB.map((id) => toolName(now.blobs.get(id)));
  if (namesA.join('\n') !== namesB.join('\n')) {
    const added = namesB.filter((n) => !namesA.includes(n));
    const removed = namesA.filter((n) => !namesB.includes(n));
    const change = [added.length > 0 ? `added ${added.join(', ')}` : '', removed.length > 0 ? `removed ${removed.join(', ')}` : ''].filter((s) => s !== '');
    return [`tools: recorded [${namesA.join(', ')}], now [${namesB.join(', ')}]${change.length > 0 ? ` (${change.join('; ')})` : ' (order changed)'}`];
  }
  for (const [i, id] of idsA.entries()) {
    if (id === idsB[i]) continue;
    return textDiff(`tool schema ${namesA[i] ?? ''}`, JSON.stringify(recorded.blobs.get(id)) ?? '', JSON.stringify(now.blobs.get(idsB[i] ?? '')) ?? '', true);
  }
  return [];
}

function roleOf(value: unknown): string {
  return isRecord(value) && typeof value.role === 'string' ? value.role : 'unknown role';
}

/** `message 3 (tool read_file)`, `message 0 (system)`. */
function messageLabel(i: number, value: unknown): string {
  const role = roleOf(value);
  const tool = isRecord(value) && typeof value.tool_name === 'string' ? ` ${value.tool_name}` : '';
  return `message ${i} (${role}${tool})`;
}

function contentOf(value: unknown): string {
  return isRecord(value) && typeof value.content === 'string' ? value.content : '';
}

function messagesDiff(recorded: RequestView, now: RequestView): string[] {
  const idsA = recorded.record.messages ?? [];
  const idsB = now.record.messages ?? [];
  const n = Math.max(idsA.length, idsB.length);
  for (let i = 0; i < n; i++) {
    const idA = idsA[i];
    const idB = idsB[i];
    if (idA === idB) continue;
    if (idA === undefined) {
      const value = now.blobs.get(idB ?? '');
      return [`${messageLabel(i, value)} is new: the recorded request had ${idsA.length} messages, this one has ${idsB.length}`, `  now: ${excerpt(contentOf(value), 0)}`];
    }
    if (idB === undefined) {
      const value = recorded.blobs.get(idA);
      return [`${messageLabel(i, value)} is missing: the recorded request had ${idsA.length} messages, this one has ${idsB.length}`, `  recorded: ${excerpt(contentOf(value), 0)}`];
    }
    const a = recorded.blobs.get(idA);
    const b = now.blobs.get(idB);
    if (roleOf(a) !== roleOf(b)) return [`message ${i}: recorded role ${roleOf(a)}, now ${roleOf(b)}`];
    const label = messageLabel(i, b);
    if (contentOf(a) !== contentOf(b)) return textDiff(`${label} content`, contentOf(a), contentOf(b));
    return textDiff(label, JSON.stringify(a) ?? '', JSON.stringify(b) ?? '', true);
  }
  return [];
}

/** The first differing character of two texts, with a little context on each side. */
export function textDiff(label: string, a: string, b: string, json = false): string[] {
  let p = 0;
  const n = Math.min(a.length, b.length);
  while (p < n && a[p] === b[p]) p++;
  if (p === a.length && p === b.length) return [];
  const lineNo = a.slice(0, p).split('\n').length;
  return [
    `${label} differs at character ${p + 1} (its line ${lineNo}):`,
    `  recorded: ${excerpt(a, p, json)}`,
    `  now:      ${excerpt(b, p, json)}`,
  ];
}

/** `text` around `at`, quoted as JSON (newlines visible) unless it is JSON already, with … where it was cut. */
function excerpt(text: string, at: number, json = false): string {
  const start = Math.max(0, at - BEFORE);
  const end = Math.min(text.length, at + AFTER);
  const quoted = json ? text.slice(start, end) : JSON.stringify(text.slice(start, end));
  return `${start > 0 ? '…' : ''}${quoted}${end < text.length ? '…' : ''}`;
}
