/**
 * Text from the model or its tools, made safe for a terminal. A model (or a hostile Ollama
 * server, or a file it read) can write escape sequences: OSC 52 sets the clipboard, OSC 0 the
 * window title, CSI sequences move the cursor and erase what was printed, `\r` and backspace
 * overwrite a line so that a command reads differently from what ran. Text mode removes them
 * from everything it prints that did not come from navi itself; JSON output escapes them anyway.
 */

/** Starts escape sequences: ESC, and the C1 controls DCS, SOS, CSI, OSC, PM, APC. */
const INTRODUCERS = '\\x1b\\x90\\x98\\x9b\\x9d\\x9e\\x9f';

/**
 * Whole sequences, removed with their payload:
 * - control strings (OSC, DCS, SOS, PM, APC) up to BEL or ST (`ESC \` or 0x9C) on the same
 *   line; the payload excludes line breaks (an unterminated string never swallows the lines
 *   after it: what is shown may gain junk, never lose text) and every introducer (so an
 *   unterminated string costs one scan, not one per byte);
 * - CSI: parameters, intermediates, a final byte;
 * - other escapes: ESC, intermediates, a final byte (`ESC c` resets the terminal).
 */
const SEQUENCE = new RegExp(
  [
    `(?:\\x1b[\\]PX^_]|[\\x90\\x98\\x9d\\x9e\\x9f])[^\\n\\x07\\x9c${INTRODUCERS}]*(?:\\x07|\\x1b\\\\|\\x9c)`,
    '(?:\\x1b\\[|\\x9b)[\\x30-\\x3f]*[\\x20-\\x2f]*[\\x40-\\x7e]',
    '\\x1b[\\x20-\\x2f]*[\\x30-\\x7e]',
  ].join('|'),
  'g',
);

/** Every C0 control but tab and line feed, DEL and every C1 control: what is left of a broken sequence. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/**
 * `text` without terminal control sequences or control characters, keeping `\n` and `\t`
 * (`\r\n` becomes `\n`). What a person should read of it stays; nothing can drive the terminal.
 */
export function terminalSafe(text: string): string {
  return text.replace(SEQUENCE, '').replace(/\r\n/g, '\n').replace(CONTROL, '');
}

/** The start of a sequence that is not finished yet but could still be (`ESC`, `ESC [ 3`, an open OSC). */
const UNFINISHED = new RegExp(
  [
    `(?:\\x1b[\\]PX^_]|[\\x90\\x98\\x9d\\x9e\\x9f])[^\\n\\x07\\x9c${INTRODUCERS}]*\\x1b?`,
    '(?:\\x1b\\[|\\x9b)[\\x30-\\x3f]*[\\x20-\\x2f]*',
    '\\x1b[\\x20-\\x2f]*',
  ]
    .map((p) => `(?:${p})$`)
    .join('|'),
  'y',
);

/**
 * Where an unfinished escape sequence starts at the end of `text` (`text.length` when none
 * does). Streamed text arrives in pieces that may split a sequence; the caller holds this tail
 * back until the next piece, so `terminalSafe` sees the sequence whole.
 */
export function unfinishedSequenceAt(text: string): number {
  const introducer = new RegExp(`[${INTRODUCERS}]`, 'g');
  for (let m = introducer.exec(text); m !== null; m = introducer.exec(text)) {
    UNFINISHED.lastIndex = m.index;
    if (UNFINISHED.test(text)) return m.index;
  }
  return text.length;
}

/**
 * JSON text with DEL and the C1 controls escaped too: JSON.stringify escapes only C0, and some
 * terminals act on C1 (U+009B is a CSI). The same JSON value, one line, nothing to drive a terminal.
 */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
