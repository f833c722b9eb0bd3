/**
 * Finds a plan step's executor marker (`TOOL: name`, `AGENT: profile`, `SELF`) wherever the
 * model put it (end of line, brackets, after a dash, on a continuation line, in any case) and
 * returns the step text without it.
 */

/** A marker found in a step's text. */
export interface FoundMarker {
  kind: 'tool' | 'agent' | 'self';
  /** The name as written (tool or agent markers; may be missing). */
  name?: string;
  /** The step text with the marker removed. */
  text: string;
  /** How many markers the text held (more than one breaks the one-executor rule). */
  count: number;
}

interface Hit {
  kind: FoundMarker['kind'];
  name?: string;
  index: number;
  length: number;
}

// `TOOL: x`, `tool = x`, `Tool(x)`, `AGENT - x`; the name may sit in backticks, quotes or bold.
const NAMED_RE = /\b(tool|agent)\b\s*(?:[:=(]|\s[-—–]\s)\s*[`'"*]*([A-Za-z_][\w.\-/]*)?(?:\(\))?[`'"*]*\)?/gi;
// Capitals without punctuation (`TOOL read_file`) only with a lower-case name, so prose stays prose.
const BARE_RE = /\b(TOOL|AGENT)\s+`?([a-z_][\w.\-/]*)`?/g;
const SELF_RES = [/\bSELF\b/g, /[[(]\s*self\s*[\])]/gi, /\bexecutor\s*[:=]\s*self\b/gi, /(?<=[\s—–|:→-])self(?=[\s.)\]]*$)/gi];

/** Looks for an executor marker in `text`; the last one wins (markers end their step). */
export function findMarker(text: string): FoundMarker | undefined {
  const hits: Hit[] = [];
  for (const re of [NAMED_RE, BARE_RE]) {
    for (const m of text.matchAll(re)) {
      const kind = (m[1] ?? '').toLowerCase() === 'agent' ? 'agent' : 'tool';
      hits.push({ kind, name: cleanName(m[2]), index: m.index, length: m[0].length });
    }
  }
  for (const re of SELF_RES) {
    for (const m of text.matchAll(re)) hits.push({ kind: 'self', index: m.index, length: m[0].length });
  }
  if (hits.length === 0) return undefined;
  // Overlapping patterns can match one marker twice (`executor: SELF`); keep the widest match.
  const distinct: Hit[] = [];
  for (const h of hits.sort((a, b) => a.index - b.index || b.length - a.length)) {
    const overlaps = distinct.some((k) => h.index < k.index + k.length && k.index < h.index + h.length);
    if (!overlaps) distinct.push(h);
  }
  const last = distinct.at(-1);
  if (!last) return undefined;
  return { kind: last.kind, name: last.name, text: removeMarker(text, last), count: distinct.length };
}

function cleanName(raw: string | undefined): string | undefined {
  const name = raw?.replace(/\(\)$/, '').replace(/[.,;:]+$/, '');
  return name ? name : undefined;
}

/**
 * At the end or the start of the text the marker is dropped with its brackets and separators;
 * in the middle ("Use TOOL: read_file on x") only the keyword goes, so the sentence still reads.
 */
function removeMarker(text: string, hit: Hit): string {
  const before = text.slice(0, hit.index);
  const after = text.slice(hit.index + hit.length);
  if (/^[\s)\]`*.,;]*$/.test(after)) return trimSeparators(before);
  if (/^[\s[(`*]*$/.test(before)) return trimSeparators(after);
  const replacement = hit.kind === 'self' ? '' : (hit.name ?? '');
  return `${before}${replacement}${after}`.replace(/\s{2,}/g, ' ').trim();
}

function trimSeparators(text: string): string {
  let t = text;
  for (let i = 0; i < 3; i++) {
    t = t
      .replace(/[\s\-—–:|→=,;([*]+$/, '')
      .replace(/^[\s\-—–:|→=,;)\]*]+/, '')
      .replace(/\b(?:executor|via|using|with|by)$/i, '');
    // A backtick left unpaired belonged to the marker (`TOOL: x`); a paired one quotes a path.
    if (countOf(t, '`') % 2 === 1) t = /`\s*$/.test(t) ? t.replace(/`\s*$/, '') : t.replace(/^\s*`/, '');
  }
  return t.trim();
}

function countOf(text: string, ch: string): number {
  return text.split(ch).length - 1;
}
