/**
 * Head+tail capping of tool output. The start of an output usually says what ran and the end
 * says how it finished (errors, exit codes), so both are kept and the middle is dropped.
 */

import { redactAfterCut, redactBeforeCut, type RedactFn } from './redact.js';

/** The line that replaces the dropped middle. */
function omittedMarker(bytes: number): string {
  return `\n[… ${bytes} bytes omitted …]\n`;
}

function isContinuationByte(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

/** Length of `buf[0, end)` shortened so it does not end inside a UTF-8 sequence. */
function headBoundary(buf: Buffer, end: number): number {
  let i = Math.min(end, buf.length);
  if (i === buf.length) {
    // Whole buffer kept: only cut when its last sequence is incomplete.
    let start = i - 1;
    while (start > 0 && isContinuationByte(buf[start])) start--;
    const lead = buf[start];
    if (lead === undefined || lead < 0x80) return i;
    const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
    return start + need > i ? start : i;
  }
  while (i > 0 && isContinuationByte(buf[i])) i--;
  return i;
}

/** Start index of the kept tail, moved forward past continuation bytes. */
function tailBoundary(buf: Buffer, start: number): number {
  let i = Math.max(0, start);
  while (i < buf.length && isContinuationByte(buf[i])) i++;
  return i;
}

/**
 * Caps `text` to at most `maxBytes` UTF-8 bytes, keeping its head and tail around a
 * `[… N bytes omitted …]` marker. Text within the cap is returned unchanged.
 */
export function capText(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  const buf = Buffer.from(text, 'utf8');
  // The marker for the whole length is the longest it can be, so reserving it keeps the cap.
  const keep = Math.max(0, maxBytes - Buffer.byteLength(omittedMarker(buf.length)));
  const headEnd = headBoundary(buf, Math.ceil(keep / 2));
  const tailStart = tailBoundary(buf, buf.length - (keep - Math.ceil(keep / 2)));
  return (
    buf.toString('utf8', 0, headEnd) + omittedMarker(tailStart - headEnd) + buf.toString('utf8', tailStart)
  );
}

/**
 * Collects a stream's bytes keeping only the first and last `maxBytes / 2`, so a command that
 * prints gigabytes costs `maxBytes` (plus one chunk) of memory.
 */
export class HeadTailCollector {
  private readonly headMax: number;
  private readonly tailMax: number;
  private readonly head: Buffer[] = [];
  private headLen = 0;
  private tail: Buffer[] = [];
  private tailLen = 0;
  /** Bytes pushed in total, kept or not. */
  totalBytes = 0;

  constructor(maxBytes: number) {
    this.headMax = Math.ceil(maxBytes / 2);
    this.tailMax = maxBytes - this.headMax;
  }

  push(chunk: Buffer): void {
    this.totalBytes += chunk.length;
    let rest = chunk;
    if (this.headLen < this.headMax) {
      const take = Math.min(this.headMax - this.headLen, rest.length);
      // Copy so the kept head does not pin the whole (possibly 64 KiB) chunk in memory.
      this.head.push(Buffer.from(rest.subarray(0, take)));
      this.headLen += take;
      rest = rest.subarray(take);
      if (rest.length === 0) return;
    }
    this.tail.push(rest);
    this.tailLen += rest.length;
    while (this.tail.length > 1 && this.tailLen - (this.tail[0]?.length ?? 0) >= this.tailMax) {
      this.tailLen -= this.tail.shift()?.length ?? 0;
    }
    // Many tiny chunks would make the array (and `shift`) grow; fold them into one buffer.
    if (this.tail.length > 64) {
      const joined = Buffer.concat(this.tail);
      this.tail = [Buffer.from(joined.subarray(Math.max(0, joined.length - this.tailMax)))];
      this.tailLen = this.tail[0]?.length ?? 0;
    }
  }

  /**
   * The kept text, with the omitted-bytes marker when anything was dropped. With `redact`, the
   * text is redacted and a secret split by the cut leaves no piece on either side of the marker
   * (the registry redacts whole output later, but cannot recognise half a secret).
   */
  text(redact?: RedactFn): string {
    const head = Buffer.concat(this.head);
    const tailAll = Buffer.concat(this.tail);
    const tail = tailAll.subarray(Math.max(0, tailAll.length - this.tailMax));
    const omitted = this.totalBytes - head.length - tail.length;
    if (omitted === 0) {
      const whole = Buffer.concat([head, tail]).toString('utf8');
      return redact ? redact(whole) : whole;
    }
    const headEnd = headBoundary(head, head.length);
    const tailStart = tailBoundary(tail, 0);
    const headRaw = head.toString('utf8', 0, headEnd);
    const tailRaw = tail.toString('utf8', tailStart);
    const headText = redact ? redactBeforeCut(redact, headRaw) : headRaw;
    const tailText = redact ? redactAfterCut(redact, tailRaw) : tailRaw;
    // Pieces of a secret dropped next to the cut count as omitted too (redaction itself changes
    // lengths, so this is near enough, and exact when nothing was dropped).
    const dropped = redact ? Math.max(0, Buffer.byteLength(redact(headRaw)) - Buffer.byteLength(headText)) + Math.max(0, Buffer.byteLength(redact(tailRaw)) - Buffer.byteLength(tailText)) : 0;
    return headText + omittedMarker(omitted + (head.length - headEnd) + tailStart + dropped) + tailText;
  }
}
