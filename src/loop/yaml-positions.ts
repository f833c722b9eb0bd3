/**
 * Where each key of a YAML document is, so a schema problem can name `file:line:col` as well as
 * the key. Built from js-yaml's event stream (the same parser that loaded the document), keyed by
 * the dotted paths zod issues use: `checks[0].timeout_s`.
 */

import { EVENT_ID, getScalarValue, parseEvents, type Event } from 'js-yaml';

type Frame =
  | { kind: 'doc'; path: string }
  | { kind: 'map'; path: string; key: string | undefined; expectKey: boolean }
  | { kind: 'seq'; path: string; index: number };

function child(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path === '' ? key : `${path}.${key}`;
}

function startOf(ev: Event): number {
  switch (ev.type) {
    case EVENT_ID.SCALAR:
      return ev.anchorStart >= 0 ? Math.min(ev.anchorStart, ev.valueStart) : ev.valueStart;
    case EVENT_ID.MAPPING:
    case EVENT_ID.SEQUENCE:
      return ev.start;
    case EVENT_ID.ALIAS:
      return ev.anchorStart;
    case EVENT_ID.DOCUMENT:
    case EVENT_ID.POP:
      return 0;
  }
}

/**
 * Offsets of every key (for mapping entries: where the key is written) and sequence item in
 * `source`. Returns an empty map when the text does not parse; call it only after loading it.
 */
export function yamlPathOffsets(source: string, maxDepth: number): Map<string, number> {
  const offsets = new Map<string, number>();
  let events: Event[];
  try {
    events = parseEvents(source, { maxDepth });
  } catch {
    return offsets;
  }
  const stack: Frame[] = [];
  for (const ev of events) {
    if (ev.type === EVENT_ID.DOCUMENT) {
      stack.push({ kind: 'doc', path: '' });
      continue;
    }
    if (ev.type === EVENT_ID.POP) {
      stack.pop();
      continue;
    }
    const parent = stack[stack.length - 1];
    // Paths under a non-scalar key cannot be named by zod; `?` keeps them out of the way.
    let path = '?';
    if (parent?.kind === 'map' && parent.expectKey) {
      parent.expectKey = false;
      parent.key = ev.type === EVENT_ID.SCALAR ? getScalarValue(source, ev) : undefined;
      if (parent.key !== undefined) {
        const keyPath = child(parent.path, parent.key);
        if (!offsets.has(keyPath)) offsets.set(keyPath, startOf(ev));
      }
    } else {
      if (parent?.kind === 'map') {
        parent.expectKey = true;
        path = parent.key === undefined ? '?' : child(parent.path, parent.key);
      } else if (parent?.kind === 'seq') {
        path = child(parent.path, parent.index++);
      } else if (parent?.kind === 'doc') {
        path = '';
      }
      if (!offsets.has(path)) offsets.set(path, startOf(ev));
    }
    if (ev.type === EVENT_ID.MAPPING) stack.push({ kind: 'map', path, key: undefined, expectKey: true });
    else if (ev.type === EVENT_ID.SEQUENCE) stack.push({ kind: 'seq', path, index: 0 });
  }
  return offsets;
}

/** The offset of `path`, or of its nearest ancestor that has one; 0 when none does. */
export function offsetOf(offsets: ReadonlyMap<string, number>, path: string): number {
  let p = path;
  for (;;) {
    const at = offsets.get(p);
    if (at !== undefined) return at;
    if (p === '') return 0;
    const cut = Math.max(p.lastIndexOf('.'), p.lastIndexOf('['));
    p = cut <= 0 ? '' : p.slice(0, cut);
  }
}
