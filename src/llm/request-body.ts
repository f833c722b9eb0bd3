/**
 * Chat request bodies as bytes, built on what the previous request of the same agent already
 * serialised. Every request carries the whole history, and the history only grows at its end
 * (transient messages come last, compression replaces it wholesale): re-serialising and
 * re-encoding a long history on every call cost time that grew with it (SPEC §12, the harness
 * gap stays flat). The bytes are exactly `chatRequestJson(req)`, cut into a few segments that
 * the HTTP request writes one after another.
 */
import type { BodyParts } from './guarded-fetch.js';
import { chatRequestFrame, messageJson, toOllamaRequest } from './ollama-mapping.js';
import type { ChatMessage, ChatRequest } from './types.js';

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

  /** The frame of the last request (model, settings, tool schemas), reused while they stay. */
  private lastFrame: { req: FrameFields; head: Buffer; tail: Buffer } | null = null;

  build(req: ChatRequest): BodyParts {
    const { messages } = req;
    const key = messages[0]?.content ?? '';
    const sent = this.sent.get(key) ?? { messages: [], lengths: [], segments: [] };
    const same = commonPrefix(sent, messages);

    // Segments wholly inside the unchanged prefix are sent again as they are.
    let kept = 0;
    let covered = 0;
    for (let i = 0; i < sent.segments.length; i++) {
      const end = sent.segments[i + 1]?.first ?? sent.messages.length;
      if (end > same) break;
      kept++;
      covered = end;
    }
    const segments = sent.segments;
    segments.length = kept;
    // The rest of the prefix (it ended in a segment that also held what changed) becomes a
    // segment of its own, so the next call keeps it whole; what is new is the last segment.
    if (same > covered) segments.push({ first: covered, bytes: serialize(messages, covered, same) });
    mergeSimilar(segments);
    if (messages.length > same) segments.push({ first: same, bytes: serialize(messages, same, messages.length) });

    // What was sent, updated in place from the first difference on.
    sent.messages.length = same;
    sent.lengths.length = same;
    for (let i = same; i < messages.length; i++) {
      const m = messages[i] as ChatMessage;
      sent.messages.push(m);
      sent.lengths.push(m.content.length);
    }
    this.sent.delete(key);
    this.sent.set(key, sent);
    if (this.sent.size > MAX_AGENTS) this.sent.delete(this.sent.keys().next().value ?? '');

    const { head, tail } = this.frame(req);
    const chunks = new Array<Buffer>(segments.length + 2);
    chunks[0] = head;
    let length = head.length + tail.length;
    for (const [i, seg] of segments.entries()) {
      chunks[i + 1] = seg.bytes;
      length += seg.bytes.length;
    }
    chunks[segments.length + 1] = tail;
    return { chunks, length };
  }

  /** What comes before the first message and after the last one. */
  private frame(req: ChatRequest): { head: Buffer; tail: Buffer } {
    const last = this.lastFrame;
    if (last !== null && sameFrame(last.req, req)) return last;
    const { head, tail } = chatRequestFrame(req);
    const { model, tools, think, numCtx, numPredict, temperature, keepAlive, format } = req;
    this.lastFrame = { req: { model, tools, think, numCtx, numPredict, temperature, keepAlive, format }, head: Buffer.from(head), tail: Buffer.from(tail) };
    return this.lastFrame;
  }
}

type FrameFields = Pick<ChatRequest, 'model' | 'tools' | 'think' | 'numCtx' | 'numPredict' | 'temperature' | 'keepAlive' | 'format'>;

/** Everything but the messages the same (tool schemas by identity: a turn keeps its list). */
function sameFrame(a: FrameFields, b: FrameFields): boolean {
  return (
    a.model === b.model &&
    a.tools === b.tools &&
    a.think === b.think &&
    a.numCtx === b.numCtx &&
    a.numPredict === b.numPredict &&
    a.temperature === b.temperature &&
    a.keepAlive === b.keepAlive &&
    a.format === b.format
  );
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

/** How many leading messages are the same as before. */
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
  return (
    a.role === b.role &&
    a.content === b.content &&
    (a.thinking ?? '') === (b.thinking ?? '') &&
    a.tool_name === b.tool_name &&
    a.tool_call_id === b.tool_call_id &&
    a.tool_calls === b.tool_calls
  );
}

/** Messages `[from, to)` as they appear inside the `messages` array (comma before all but the first). */
function serialize(messages: ChatMessage[], from: number, to: number): Buffer {
  const parts: string[] = [];
  for (let i = from; i < to; i++) parts.push(i > 0 ? `,${messageJson(messages[i] as ChatMessage)}` : messageJson(messages[i] as ChatMessage));
  return Buffer.from(parts.join(''));
}

/** The plain body (`LlmClientOptions.plainBodies`): one `JSON.stringify` of the whole request, made anew. */
export function plainChatBody(req: ChatRequest): BodyParts {
  const bytes = Buffer.from(JSON.stringify({ ...toOllamaRequest(req), stream: true }));
  return { chunks: [bytes], length: bytes.length };
}
