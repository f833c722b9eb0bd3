/**
 * The recording file of `--record` / `--replay` (docs/recording-format.md), version 1: JSON
 * lines, a header first, then `blob` lines (each distinct message, tool schema and request
 * frame once, by content id) and one `exchange` line per HTTP exchange with the model server:
 * the request as ids into the blobs plus its digest, and the response as the server sent it —
 * the status, every streamed line with the milliseconds since the request started, and how it
 * ended. Storing the parts of a request once (a chat request repeats the whole history) keeps
 * a long run's file linear in its length, and lets a mismatch say which message changed.
 */
import { createHash } from 'node:crypto';
import { isRecord } from '../util/guards.js';
import type { ExchangeEnd, ExchangeRequest } from './exchange-hooks.js';

export const RECORDING_FORMAT = 'navi-recording';
export const RECORDING_VERSION = 1;

/** The first line of every recording. */
export interface RecordingHeader {
  type: 'header';
  format: typeof RECORDING_FORMAT;
  version: typeof RECORDING_VERSION;
  /** navi's version that wrote it (information only). */
  navi_version: string;
  created_at: string;
}

/** One part of one or more requests: a message, a tool schema, or a chat request's other fields. */
export interface BlobLine {
  type: 'blob';
  id: string;
  value: unknown;
}

/** A request as recorded: chat requests by parts, other requests whole. */
export interface RequestRecord {
  method: string;
  path: string;
  /** `sha256:` over the redacted request; equal digests are equal requests. */
  digest: string;
  /** Chat requests: blob id of everything but `messages` and `tools` (model, options, think…). */
  frame?: string;
  /** Chat requests: blob ids of the tool schemas, in order. */
  tools?: string[];
  /** Chat requests: blob ids of the messages, in order. */
  messages?: string[];
  /** Other requests: the JSON body (`/api/show`: `{"model": …}`); absent without a body. */
  body?: unknown;
  /** A body that is not JSON, as text. */
  body_text?: string;
}

/** One streamed line and when it arrived. */
export interface TimedLine {
  /** Milliseconds since the request started. */
  ms: number;
  line: string;
}

export interface ResponseRecord {
  /** HTTP status; null when no response arrived (connection refused, stopped before headers). */
  status: number | null;
  status_text?: string;
  /** Milliseconds from the request to the response head. */
  headers_ms?: number;
  /** Streamed (NDJSON) answers: every line as received. */
  lines?: TimedLine[];
  /** Other answers and error bodies: the whole body. */
  body?: string;
  end: {
    how: ExchangeEnd;
    ms: number;
    /** How it failed: the error's code (`ECONNREFUSED`, `ECONNRESET`, `ABORT_ERR`) and message. */
    error?: { code?: string; message: string };
  };
}

export interface ExchangeLine {
  type: 'exchange';
  /** Order in which the requests were made, from 1. */
  seq: number;
  request: RequestRecord;
  response: ResponseRecord;
}

export type RecordingLine = RecordingHeader | BlobLine | ExchangeLine;

/**
 * Text in, text with the secrets replaced out (`tools/redact.ts` rules, handed in by the CLI).
 * `beforeCut`, when present, also drops an end of the text that could be the start of a secret
 * (see `redactStream`).
 */
export type Redact = ((text: string) => string) & { beforeCut?: (text: string) => string };

/** `value` with every string redacted; the same object when nothing changed. */
export function redactDeep(value: unknown, redact: Redact): unknown {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((v: unknown) => {
      const r = redactDeep(v, redact);
      if (r !== v) changed = true;
      return r;
    });
    return changed ? out : value;
  }
  if (isRecord(value)) {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const r = redactDeep(v, redact);
      if (r !== v) changed = true;
      out[k] = r;
    }
    return changed ? out : value;
  }
  return value;
}

/** Streamed text fields: a model's answer arrives a few characters per line. */
const STREAMED_FIELDS = ['content', 'thinking'] as const;

/**
 * A streamed answer's lines with their secrets redacted. A secret the model wrote arrives in
 * pieces over several lines, where no single line holds it: each text field is redacted as one
 * running text, and characters at the end of a line that could be the start of a secret wait
 * for the next line that carries the same field (or go back to the last one). Lines keep their
 * number and timing; the concatenated text is the redacted whole. Lines without a change keep
 * their raw bytes.
 */
export function redactStream(lines: readonly string[], redact: Redact): string[] {
  const parsed: unknown[] = lines.map((raw) => {
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      return undefined;
    }
  });
  const changed = new Set<number>();
  for (const field of STREAMED_FIELDS) {
    let carry = '';
    let last = -1;
    for (const [i, value] of parsed.entries()) {
      const message = isRecord(value) ? value.message : undefined;
      if (!isRecord(message) || typeof message[field] !== 'string') continue;
      const text = carry + message[field];
      const whole = redact(text);
      const safe = redact.beforeCut?.(text) ?? whole;
      carry = whole.slice(safe.length);
      if (safe !== message[field]) {
        message[field] = safe;
        changed.add(i);
      }
      last = i;
    }
    const lastMessage = last >= 0 ? (parsed[last] as { message: Record<string, unknown> }).message : undefined;
    if (carry !== '' && lastMessage !== undefined) {
      lastMessage[field] = `${String(lastMessage[field])}${redact(carry)}`;
      changed.add(last);
    }
  }
  return lines.map((raw, i) => {
    const value = parsed[i];
    if (value === undefined) return redact(raw);
    const clean = redactDeep(value, redact);
    return clean === value && !changed.has(i) ? raw : JSON.stringify(clean);
  });
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Content id of a blob value (its JSON): 32 hex digits are plenty to tell a run's parts apart. */
export function blobId(value: unknown): string {
  return sha256(JSON.stringify(value)).slice(0, 32);
}

/** A request taken apart, redacted: its record and the blobs it refers to. */
export interface DescribedRequest {
  record: RequestRecord;
  blobs: Map<string, unknown>;
}

/** Takes a request apart (see the module comment); secrets are redacted before anything is hashed. */
export function describeRequest(req: ExchangeRequest, redact: Redact): DescribedRequest {
  const blobs = new Map<string, unknown>();
  const record: RequestRecord = { method: req.method, path: req.path, digest: '' };
  const text = req.body.toString('utf8');
  let parsed: unknown;
  let json = false;
  if (text !== '') {
    try {
      parsed = JSON.parse(text);
      json = true;
    } catch {
      record.body_text = redact(text);
    }
  }
  if (json && isRecord(parsed) && Array.isArray(parsed.messages)) {
    const { messages, tools, ...frame } = redactDeep(parsed, redact) as Record<string, unknown>;
    const add = (value: unknown): string => {
      const id = blobId(value);
      blobs.set(id, value);
      return id;
    };
    record.frame = add(frame);
    record.tools = Array.isArray(tools) ? (tools as unknown[]).map(add) : [];
    record.messages = (messages as unknown[]).map(add);
  } else if (json) {
    record.body = redactDeep(parsed, redact);
  }
  const { digest: _ignored, ...rest } = record;
  record.digest = `sha256:${sha256(JSON.stringify(rest))}`;
  return { record, blobs };
}

/** A chat request (`messages` in its body): replayed strictly in order. */
export function isChatRecord(r: RequestRecord): boolean {
  return r.messages !== undefined;
}
