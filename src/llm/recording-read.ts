/**
 * Reads a recording (`recording-format.ts`) for `--replay`: every line validated, a bad file is
 * exit 2 naming the file, the line and what is wrong — never a replay that goes astray later.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { describeError, InvalidInputError, printable } from '../errors.js';
import { RECORDING_FORMAT, RECORDING_VERSION, type ExchangeLine } from './recording-format.js';

const header = z.object({
  type: z.literal('header'),
  format: z.literal(RECORDING_FORMAT),
  version: z.number().int(),
  navi_version: z.string().optional(),
  created_at: z.string().optional(),
});

const blob = z.object({ type: z.literal('blob'), id: z.string().min(1), value: z.unknown() });

const ms = z.number().nonnegative();

const exchange = z.object({
  type: z.literal('exchange'),
  seq: z.number().int().positive(),
  request: z.object({
    method: z.string(),
    path: z.string(),
    digest: z.string(),
    frame: z.string().optional(),
    tools: z.array(z.string()).optional(),
    messages: z.array(z.string()).optional(),
    body: z.unknown().optional(),
    body_text: z.string().optional(),
  }),
  response: z.object({
    status: z.number().int().nullable(),
    status_text: z.string().optional(),
    headers_ms: ms.optional(),
    lines: z.array(z.object({ ms, line: z.string() })).optional(),
    body: z.string().optional(),
    end: z.object({
      how: z.enum(['end', 'error', 'cancelled']),
      ms,
      error: z.object({ code: z.string().optional(), message: z.string() }).optional(),
    }),
  }),
});

/** An exchange and the line of the file it came from (for messages). */
export interface RecordedExchange extends ExchangeLine {
  line: number;
}

export interface Recording {
  file: string;
  /** In request order (`seq`). */
  exchanges: RecordedExchange[];
  blobs: Map<string, unknown>;
}

/** Parses `text` (the content of `file`); throws `InvalidInputError` naming the line. */
export function parseRecording(text: string, file: string): Recording {
  const where = (n: number): string => `--replay ${printable(file)}: line ${n}`;
  const lines = text.split('\n');
  const blobs = new Map<string, unknown>();
  const exchanges: RecordedExchange[] = [];
  let sawHeader = false;
  for (const [i, raw] of lines.entries()) {
    const n = i + 1;
    if (raw.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (err) {
      throw new InvalidInputError('recording_invalid', `${where(n)}: not JSON (${describeError(err)})`);
    }
    if (!sawHeader) {
      const h = header.safeParse(value);
      if (!h.success) {
        throw new InvalidInputError('recording_invalid', `${where(n)}: not a navi recording (the first line must be {"type":"header","format":"${RECORDING_FORMAT}","version":${RECORDING_VERSION},…}); record one with --record FILE`);
      }
      if (h.data.version !== RECORDING_VERSION) {
        throw new InvalidInputError('recording_version', `${where(n)}: recording format version ${h.data.version}; this navi reads version ${RECORDING_VERSION}. Record it again with this navi (--record FILE)`);
      }
      sawHeader = true;
      continue;
    }
    const type = typeof value === 'object' && value !== null && 'type' in value ? value.type : undefined;
    if (type === 'blob') {
      const b = blob.safeParse(value);
      if (!b.success) throw new InvalidInputError('recording_invalid', `${where(n)}: bad blob line (${issue(b.error)})`);
      blobs.set(b.data.id, b.data.value);
    } else if (type === 'exchange') {
      const e = exchange.safeParse(value);
      if (!e.success) throw new InvalidInputError('recording_invalid', `${where(n)}: bad exchange line (${issue(e.error)})`);
      const ex = e.data;
      for (const id of [ex.request.frame, ...(ex.request.tools ?? []), ...(ex.request.messages ?? [])]) {
        if (id !== undefined && !blobs.has(id)) throw new InvalidInputError('recording_invalid', `${where(n)}: refers to blob ${printable(id)}, which no line before it defines`);
      }
      exchanges.push({ ...ex, line: n });
    } else {
      throw new InvalidInputError('recording_invalid', `${where(n)}: unknown line type ${printable(JSON.stringify(type) ?? 'undefined')} (expected "blob" or "exchange")`);
    }
  }
  if (!sawHeader) throw new InvalidInputError('recording_invalid', `--replay ${printable(file)}: the file is empty; record one with --record FILE`);
  exchanges.sort((a, b) => a.seq - b.seq);
  return { file, exchanges, blobs };
}

function issue(err: z.ZodError): string {
  const first = err.issues[0];
  if (first === undefined) return 'invalid';
  const path = first.path.map(String).join('.');
  return `${path === '' ? '' : `${path}: `}${first.message}`;
}

/** Reads and parses `file`; an unreadable file is exit 2 naming it. */
export function readRecording(file: string, shownAs: string): Recording {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new InvalidInputError('recording_unreadable', `--replay ${printable(shownAs)}: cannot read it (${describeError(err)})`);
  }
  return parseRecording(text, shownAs);
}
