/**
 * Chat request bodies as bytes, built on what the previous request of the same agent already
 * serialised. Every request carries the whole history, and the history only grows at its end
 * (transient messages come last, compression replaces it wholesale): re-serialising and
 * re-encoding a long history on every call cost time that grew with it (SPEC §12, the harness
 * gap stays flat). The bytes are exactly `chatRequestJson(req)`, cut into a few segments that
 * the HTTP request writes one after another.
 */
import { chatRequestJson, messageJson } from './ollama-mapping.js';
import type { ChatMessage, ChatRequest } from './types.js';

/** A request body in pieces, and its length in bytes. */
export interface BodyParts {
  chunks: Buffer[];
  length: number;
}

/** Runs of messages already serialised: messages `[first, next segment's first)`. */
interface Segment {
  first: number;
  bytes: Buffer;
}

interface Sent {
  messages: ChatMessage[];
  /** Each message's content length when it was sent (a message changed in place is sent anew). */
  lengths: number[];
  segments: Segment[];
}


/** Agents remembered (the main agent and sub-agents nested under it take turns). */
const MAX_AGENTS = 4;

export class ChatBodies {
  /** By system prompt: each agent's requests start with its own. */
  private readonly sent = new Map<string, Sent>();

  build(req: ChatRequest): BodyParts {
    const { messages } = req;
    const key = messages[0]?.content ?? '';
    const prev = this.sent.get(key);
    const same = prev ? commonPrefix(prev, messages) : 0;

    // Segments wholly inside the unchanged prefix are sent again as they are.
    const segments: Segment[] = [];
    let covered = 0;
    for (const [i, seg] of (prev?.segments ?? []).entries()) {
      const end = prev?.segments[i + 1]?.first ?? prev?.messages.length ?? 0;
      if (end > same) break;
      segments.push(seg);
      covered = end;
    }
    // The rest of the prefix (it ended in a segment that also held what changed) becomes a
    // segment of its own, so the next call keeps it whole; what is new is the last segment.
    if (same > covered) segments.push({ first: covered, bytes: serialize(messages, covered, same) });
    mergeSimilar(segments);
    if (messages.length > same) segments.push({ first: same, bytes: serialize(messages, same, messages.length) });

    this.sent.delete(key);
    this.sent.set(key, { messages: messages.slice(), lengths: messages.map((m) => m.content.length), segments });
    if (this.sent.size > MAX_AGENTS) this.sent.delete(this.sent.keys().next().value ?? '');

    const [head, tail] = frame(req);
    const chunks = [head, ...segments.map((s) => s.bytes), tail];
    return { chunks, length: chunks.reduce((n, c) => n + c.length, 0) };
  }
}

/**
 * Merges the newest segments while the last is at least half the size of the one before it, as
 * a binary counter carries: segment sizes fall geometrically, so a request has a few dozen
 * pieces at most, and each byte is copied O(log n) times over a session instead of on every
 * call (or every few calls, which left megabytes of garbage buffers behind).
 */
function mergeSimilar(segments: Segment[]): void {
  for (;;) {
    const last = segments.at(-1);
    const before = segments.at(-2);
    if (last === undefined || before === undefined || last.bytes.length * 2 < before.bytes.length) return;
    segments.splice(-2, 2, { first: before.first, bytes: Buffer.concat([before.bytes, last.bytes]) });
  }
}

/** How many leading messages are the same as before (thinking is never sent, so not compared). */
function commonPrefix(before: Sent, now: ChatMessage[]): number {
  const n = Math.min(before.messages.length, now.length);
  let i = 0;
  while (i < n && sameOnWire(before.messages[i] as ChatMessage, before.lengths[i] ?? -1, now[i] as ChatMessage)) i++;
  return i;
}

/**
 * The same object with the same content length (what the per-message JSON memo trusts too), or
 * another object with every field that goes on the wire equal (a rebuilt system message).
 */
function sameOnWire(a: ChatMessage, aLength: number, b: ChatMessage): boolean {
  if (a === b) return aLength === b.content.length;
  return a.role === b.role && a.content === b.content && a.tool_name === b.tool_name && a.tool_calls === b.tool_calls;
}

/** Messages `[from, to)` as they appear inside the `messages` array (comma before all but the first). */
function serialize(messages: ChatMessage[], from: number, to: number): Buffer {
  const parts: string[] = [];
  for (let i = from; i < to; i++) parts.push(i > 0 ? `,${messageJson(messages[i] as ChatMessage)}` : messageJson(messages[i] as ChatMessage));
  return Buffer.from(parts.join(''));
}

/** What comes before the first message and after the last one. */
function frame(req: ChatRequest): [Buffer, Buffer] {
  const whole = chatRequestJson({ ...req, messages: [] });
  const open = whole.indexOf(',"messages":[') + ',"messages":['.length;
  return [Buffer.from(whole.slice(0, open)), Buffer.from(whole.slice(open))];
}
