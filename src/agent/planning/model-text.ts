/**
 * Line-level helpers for reading a planner model's free text: local models wrap the requested
 * format in markdown (headings, bold, bullets), leak `<think>` blocks and fence whole answers.
 */

/**
 * Strips what is never part of the answer: `<think>` blocks (and everything before a stray
 * closing tag, which chat templates produce when they open the block themselves), code-fence
 * lines, carriage returns.
 */
export function stripModelNoise(text: string): string {
  let t = text.replace(/\r\n?/g, '\n');
  t = t.replace(/<(think|thinking|reasoning)>[\s\S]*?<\/\1>/gi, '');
  const closers = [...t.matchAll(/<\/(?:think|thinking|reasoning)>/gi)];
  const last = closers.at(-1);
  if (last?.index !== undefined) t = t.slice(last.index + last[0].length);
  t = t.replace(/<\/?(?:think|thinking|reasoning)>/gi, '');
  return t
    .split('\n')
    .filter((line) => !/^\s*(?:```|~~~)[\w+-]*\s*$/.test(line))
    .join('\n');
}

/** A section label the parser knows: its canonical key and the words that name it. */
export interface LabelSpec<K extends string> {
  key: K;
  /** Anchored alternatives, case-insensitive, e.g. `knowledge[ _-]?rules?`. */
  pattern: string;
}

/** A line recognised as a section header, with whatever followed the label on that line. */
export interface HeaderMatch<K extends string> {
  key: K;
  rest: string;
}

/**
 * Recognises `TASK:`, `## Task`, `**GOAL:** text`, `- **Unknowns**:`, `1. COMPLEXITY: medium`,
 * `GOAL — text`. To keep list content from reading as headers, a bulleted or numbered line
 * only counts when its label is bold, a heading or written in capitals, and a plain label
 * needs a colon or to stand alone on its line.
 */
export function matchHeader<K extends string>(line: string, labels: readonly LabelSpec<K>[]): HeaderMatch<K> | undefined {
  let s = line.trim().replace(/^>\s*/, '');
  const heading = /^#{1,6}\s*/.exec(s);
  if (heading) s = s.slice(heading[0].length);
  const listed = /^(?:[-*+•]|\d{1,2}[.)])\s+/.exec(s);
  if (listed) s = s.slice(listed[0].length);
  const bold = /^(?:\*\*|__|\*|_)/.exec(s);
  if (bold) s = s.slice(bold[0].length);
  for (const label of labels) {
    const m = new RegExp(`^(${label.pattern})(?![\\w-])`, 'i').exec(s);
    if (!m) continue;
    const word = m[1] ?? '';
    let after = s.slice(m[0].length).replace(/^\s*(?:\*\*|__|\*|_)?\s*/, '');
    const colon = /^[:：]/.test(after);
    const upper = word === word.toUpperCase();
    const dash = upper && /^[—–-]\s/.test(after);
    if (!colon && !dash && after !== '' && !heading) continue;
    if (listed && !bold && !heading && !upper) continue;
    after = after.replace(/^[:：—–-]?\s*(?:\*\*|__)?\s*/, '');
    return { key: label.key, rest: after.trim() };
  }
  return undefined;
}

/** A list line without its bullet, number, checkbox or bold markers. */
export function stripItem(line: string): string {
  return line
    .trim()
    .replace(/^(?:[-*+•]|\d{1,3}[.)])\s+/, '')
    .replace(/^\[[ xX]\]\s+/, '')
    .replace(/\*\*|__/g, '')
    .trim();
}

/** Whether a line starts a list item (bullet or number). */
export function isListItem(line: string): boolean {
  return /^\s*(?:[-*+•]|\d{1,3}[.)])\s+/.test(line);
}

/** Whether the line is indented (a continuation of the item above it). */
export function isIndented(line: string): boolean {
  return /^\s+\S/.test(line);
}

/** Placeholders models write for an empty list. */
export function isEmptyItem(item: string): boolean {
  return /^(?:none|n\/?a|nothing|no(?:ne)? known|-|—|\(none\)|not applicable)\.?$/i.test(item.trim());
}
