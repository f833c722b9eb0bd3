/**
 * Phase 1 parser: the model's TASK / GOAL / UNKNOWNS / RESOURCES / KNOWLEDGE RULES / COMPLEXITY /
 * SUBTASKS / COMMITMENTS sections (plus DIRECT) into an `Analysis`. Lenient by design: a missing
 * section is empty and a missing COMPLEXITY defaults to medium with a note, because Phase 3 can
 * still plan from a partial analysis and a repair call costs a full prefill on local models.
 */
import { isEmptyItem, isIndented, isListItem, matchHeader, stripItem, stripModelNoise, type LabelSpec } from './model-text.js';
import type { Analysis, Complexity } from './types.js';

type SectionKey =
  | 'task'
  | 'goal'
  | 'unknowns'
  | 'resources'
  | 'knowledgeRules'
  | 'complexity'
  | 'subtasks'
  | 'commitments'
  | 'direct';

/** Section names as models write them; exported so the plan parser can skip echoed sections. */
export const ANALYSIS_LABELS: readonly LabelSpec<SectionKey>[] = [
  { key: 'subtasks', pattern: 'sub[- ]?tasks?' },
  { key: 'task', pattern: 'tasks?' },
  { key: 'goal', pattern: 'goals?' },
  { key: 'unknowns', pattern: 'unknowns?|open questions' },
  { key: 'resources', pattern: 'resources?' },
  { key: 'knowledgeRules', pattern: 'knowledge[ _-]?rules?|knowledge|rules' },
  { key: 'complexity', pattern: 'complexity' },
  { key: 'commitments', pattern: 'commitments?' },
  { key: 'direct', pattern: 'direct' },
];

/** A parsed analysis plus what the parser had to assume. */
export type ParsedAnalysis = Analysis & { notes: string[] };

/** Result of `parseAnalysis`: the analysis, or why none could be read. */
export type AnalysisParse = ParsedAnalysis | { problems: string[] };

const COMPLEXITY_WORDS: Readonly<Record<string, Complexity>> = {
  simple: 'simple',
  trivial: 'simple',
  easy: 'simple',
  low: 'simple',
  medium: 'medium',
  moderate: 'medium',
  intermediate: 'medium',
  complex: 'complex',
  autonomous: 'complex',
  hard: 'complex',
  high: 'complex',
};

const EXACT_RE = /\b(simple|medium|complex)\b/i;
const SYNONYM_RE = new RegExp(`\\b(${Object.keys(COMPLEXITY_WORDS).join('|')})\\b`, 'i');
/** Prose such as "a medium-complexity task" when the model skipped the COMPLEXITY line. */
const PROSE_RE = /\b(simple|medium|complex)[- ]complexity\b|\bcomplexity\W{1,4}(simple|medium|complex)\b/i;

/** Parses Phase 1 output. Returns `{problems}` only when no section at all can be found. */
export function parseAnalysis(text: string): AnalysisParse {
  const sections = new Map<SectionKey, string[]>();
  let current: SectionKey | undefined;
  let direct = false;
  const cleaned = stripModelNoise(text);
  for (const line of cleaned.split('\n')) {
    if (isBareDirect(line)) {
      direct = true;
      continue;
    }
    const header = matchHeader(line, ANALYSIS_LABELS);
    if (header) {
      current = header.key;
      const lines = sections.get(current) ?? [];
      sections.set(current, lines);
      if (header.rest) lines.push(header.rest);
      continue;
    }
    if (current && line.trim()) sections.get(current)?.push(line);
  }

  const directLines = sections.get('direct');
  if (directLines) direct = directLines.length === 0 || !/^(?:no|false|n\/?a|none)\b/i.test(stripItem(directLines[0] ?? ''));
  const complexityText = (sections.get('complexity') ?? []).join(' ');
  if (/\bdirect\b/i.test(complexityText)) direct = true;

  const found = [...sections.keys()].filter((k) => k !== 'direct');
  if (found.length === 0 && !direct) {
    return { problems: ['no analysis sections found (expected TASK:, GOAL:, COMPLEXITY: …)'] };
  }

  const notes: string[] = [];
  let complexity = complexityOf(complexityText) ?? proseComplexity(cleaned);
  if (!complexity) {
    complexity = direct ? 'simple' : 'medium';
    if (!direct) notes.push('no COMPLEXITY in the analysis; assumed medium');
  }
  return {
    task: scalar(sections.get('task')),
    goal: scalar(sections.get('goal')),
    unknowns: items(sections.get('unknowns')),
    resources: items(sections.get('resources')),
    knowledgeRules: items(sections.get('knowledgeRules')),
    complexity,
    subtasks: items(sections.get('subtasks')),
    commitments: items(sections.get('commitments')),
    direct,
    notes,
  };
}

/** `DIRECT` alone on a line (any markdown around it); lowercase prose "direct" never counts. */
function isBareDirect(line: string): boolean {
  return /^DIRECT\.?$/.test(line.replace(/[#*_>`\s]/g, ''));
}

/** The exact words win over synonyms, so "not trivial: medium" reads as medium. */
function complexityOf(text: string): Complexity | undefined {
  const m = EXACT_RE.exec(text) ?? SYNONYM_RE.exec(text);
  return m?.[1] ? COMPLEXITY_WORDS[m[1].toLowerCase()] : undefined;
}

function proseComplexity(text: string): Complexity | undefined {
  const m = PROSE_RE.exec(text);
  const word = m?.[1] ?? m?.[2];
  return word ? COMPLEXITY_WORDS[word.toLowerCase()] : undefined;
}

function scalar(lines: string[] | undefined): string {
  return (lines ?? []).map(stripItem).filter((l) => l && !isEmptyItem(l)).join(' ');
}

/**
 * List items: each bullet, number or unindented line starts an item; an indented line without
 * a bullet continues the previous one (models wrap long items).
 */
function items(lines: string[] | undefined): string[] {
  const out: string[] = [];
  for (const line of lines ?? []) {
    const text = stripItem(line);
    if (!text) continue;
    const previous = out.length - 1;
    if (previous >= 0 && isIndented(line) && !isListItem(line)) out[previous] = `${out[previous]} ${text}`;
    else out.push(text);
  }
  return out.filter((item) => !isEmptyItem(item));
}
