/**
 * Phase 3 parser: MILESTONES plus numbered steps, each with one executor marker.
 *
 * What is a problem (the runner asks for one repair) and what is only a note:
 * - problems: no steps; more than 20 steps; a step with no description.
 * - notes: a step without a marker runs as SELF; an unknown tool or profile name runs as SELF
 *   (the executor is a hint to the agent, which still sees every tool at execution time, and
 *   a repair round-trip for a name costs a whole prefill); a name that matches a known one
 *   up to case, `-`/`_` or a `functions.` prefix is corrected; a TOOL naming a profile (or an
 *   AGENT naming a tool) switches kind; several markers in one step keep the last; steps are
 *   renumbered 1..N.
 */
import { ANALYSIS_LABELS } from './parse-analysis.js';
import { findMarker } from './executor-marker.js';
import { isEmptyItem, isIndented, isListItem, matchHeader, stripItem, stripModelNoise, type LabelSpec } from './model-text.js';
import { MAX_STEPS, type ExecutionPlan, type Executor, type PlanStep } from './types.js';

/** Names a step's executor may use: the caller's tools and the profiles spawn_agent accepts. */
export interface PlanParseOptions {
  knownTools: readonly string[];
  knownProfiles: readonly string[];
}

/** A parsed plan plus what the parser had to assume. */
export type ParsedPlan = ExecutionPlan & { notes: string[] };

/**
 * Result of `parseExecutionPlan`. On failure, `oversized` holds the full plan when having more
 * than 20 steps is the only problem, so the runner can truncate it after a failed repair.
 */
export type PlanParse = ParsedPlan | { problems: string[]; oversized?: ParsedPlan };

type Mode = 'none' | 'milestones' | 'steps' | 'other';

const PLAN_LABELS: readonly LabelSpec<Mode>[] = [
  { key: 'milestones', pattern: 'milestones?|checkpoints' },
  { key: 'steps', pattern: 'steps|execution[ _-]?(?:plan|steps)|numbered steps|action plan|plan' },
  ...ANALYSIS_LABELS.map((l) => ({ key: 'other' as const, pattern: l.pattern })),
];

// `1.`, `1)`, `Step 1:`, `### Step 1 —`, `- 2.`; bold markers are removed before matching.
const STEP_RE = /^(\s*)(?:[-*+•]\s+)?(?:#{1,6}\s*)?(?:(step)\s*(\d{1,3})\s*(?:[:.)—–-]|(?=\s)|$)|(\d{1,3})\s*[.)](?=\s|$))\s*(.*)$/i;

// `Milestone 2: Tests green`, `### Milestone 2 - Tests green`, `- **Milestone 2:** …`.
const MILESTONE_GROUP_RE = /^\s*(?:[-*+•]\s+)?(?:#{1,6}\s*)?milestone\s*\d{1,2}\s*[:.)—–-]\s*(.+)$/i;

// A markdown table row whose first cell is a step number: `| 1 | Read x | TOOL: read_file |`.
const TABLE_ROW_RE = /^\s*\|\s*(?:step\s*)?(\d{1,3})\.?\s*\|(.*)$/i;

interface StepLine {
  n: number;
  indent: number;
  /** Written as "Step N" (unambiguously a step, never a milestone). */
  explicit: boolean;
  text: string;
}

interface RawStep {
  n: number;
  indent: number;
  parts: string[];
  /** Inside a STEPS section (or right after milestones); preferred over stray numbered lists. */
  sectioned: boolean;
}

/** Parses Phase 3 output into milestones and steps, validating executor names. */
export function parseExecutionPlan(text: string, options: PlanParseOptions): PlanParse {
  const milestones: string[] = [];
  const raw: RawStep[] = [];
  let mode: Mode = 'none';
  let current: RawStep | undefined;
  let blank = false;
  let milestonesNumbered = false;

  for (const original of stripModelNoise(text).split('\n')) {
    const line = fromTableRow(original);
    if (!line.trim()) {
      blank = true;
      continue;
    }
    const group = MILESTONE_GROUP_RE.exec(line.replace(/\*\*|__/g, ''));
    if (group?.[1]) {
      // "Milestone 1: X" heading a group of steps: X is a milestone, the steps below are steps.
      milestones.push(group[1]);
      mode = 'steps';
      current = undefined;
      blank = false;
      continue;
    }
    const step = matchStep(line);
    const header = step?.explicit ? undefined : matchHeader(line, PLAN_LABELS);
    if (header) {
      mode = header.key;
      current = undefined;
      if (mode === 'milestones' && header.rest) milestones.push(...header.rest.split(/\s*[;|]\s*/).filter(Boolean));
      blank = false;
      continue;
    }
    if (mode === 'milestones') {
      const startsSteps =
        step && (step.explicit || findMarker(step.text) !== undefined || (step.n === 1 && milestonesNumbered) || (!milestonesNumbered && milestones.length > 0));
      if (!startsSteps) {
        if (step) milestonesNumbered = true;
        if (!isListItem(line) && milestones.length > 0 && isIndented(line)) milestones[milestones.length - 1] += ` ${stripItem(line)}`;
        else if (!isListItem(line) && milestones.length > 0 && blank) mode = 'none';
        else milestones.push(stripItem(line));
        blank = false;
        continue;
      }
      mode = 'steps';
    }
    if (step && !(current && step.indent >= current.indent + 2)) {
      current = { n: step.n, indent: step.indent, parts: [step.text], sectioned: mode === 'steps' };
      raw.push(current);
    } else if (current && (!blank || isIndented(line) || isListItem(line) || findMarker(line) !== undefined)) {
      current.parts.push(stripItem(line));
    }
    blank = false;
  }

  const sectioned = raw.filter((s) => s.sectioned);
  return validate(sectioned.length > 0 ? sectioned : raw, milestones.map(clean).filter((m) => m && !isEmptyItem(m)), options);
}

/** A numbered table row as a `N. cells…` line; other lines (and header rows) unchanged. */
function fromTableRow(line: string): string {
  const m = TABLE_ROW_RE.exec(line);
  if (!m) return line;
  const cells = (m[2] ?? '').split('|').map((c) => c.trim()).filter(Boolean);
  return `${m[1]}. ${cells.join(' ')}`;
}

function matchStep(line: string): StepLine | undefined {
  const m = STEP_RE.exec(line.replace(/\*\*|__/g, ''));
  if (!m) return undefined;
  const n = Number(m[3] ?? m[4]);
  return { n, indent: (m[1] ?? '').length, explicit: m[2] !== undefined, text: m[5] ?? '' };
}

function validate(raw: RawStep[], milestones: string[], options: PlanParseOptions): PlanParse {
  const problems: string[] = [];
  const notes: string[] = [];
  if (raw.length === 0) {
    return { problems: ['no numbered steps found (expected lines like "1. Read src/app.ts TOOL: read_file")'] };
  }
  if (raw.some((s, i) => s.n !== i + 1)) notes.push('steps renumbered 1..N');
  const steps: PlanStep[] = raw.map((s, i) => {
    const n = i + 1;
    const combined = clean(s.parts.filter(Boolean).join('; '));
    const marker = findMarker(combined) ?? bracketedName(combined, options);
    if (marker && marker.count > 1) notes.push(`step ${n}: ${marker.count} executor markers; kept the last`);
    const text = marker ? clean(marker.text) : combined;
    if (!text) problems.push(`step ${n} has no description`);
    return { n, text, executor: resolveExecutor(n, marker, options, notes) };
  });
  if (steps.length > MAX_STEPS) {
    problems.push(`${steps.length} steps; the maximum is ${MAX_STEPS}: merge or drop steps`);
  }
  const plan: ParsedPlan = { milestones, steps, notes };
  if (problems.length === 0) return plan;
  const onlyTooLong = problems.length === 1 && steps.length > MAX_STEPS;
  return onlyTooLong ? { problems, oversized: plan } : { problems };
}

/**
 * A step without a marker that ends in a bracketed known name (`Read config (read_file)`) means
 * that executor; only known names count, so an ordinary parenthesis stays text.
 */
function bracketedName(text: string, options: PlanParseOptions): ReturnType<typeof findMarker> {
  const m = /\s*[([]\s*`?([\w.-]+)`?\s*[)\]]\s*\.?$/.exec(text);
  const name = m?.[1];
  if (!m || !name) return undefined;
  const kind = resolveName(name, options.knownTools) ? 'tool' : resolveName(name, options.knownProfiles) ? 'agent' : undefined;
  return kind ? { kind, name, text: text.slice(0, m.index).trim(), count: 1 } : undefined;
}

function resolveExecutor(n: number, marker: ReturnType<typeof findMarker>, options: PlanParseOptions, notes: string[]): Executor {
  if (!marker) {
    notes.push(`step ${n}: no executor marker; treated as SELF`);
    return { kind: 'self' };
  }
  if (marker.kind === 'self') return { kind: 'self' };
  const label = marker.kind.toUpperCase();
  if (!marker.name) {
    notes.push(`step ${n}: ${label} without a name; treated as SELF`);
    return { kind: 'self' };
  }
  const [primary, secondary] = marker.kind === 'tool' ? [options.knownTools, options.knownProfiles] : [options.knownProfiles, options.knownTools];
  const same = resolveName(marker.name, primary);
  if (same) {
    if (same !== marker.name) notes.push(`step ${n}: ${label} ${marker.name} read as ${same}`);
    return marker.kind === 'tool' ? { kind: 'tool', name: same } : { kind: 'agent', profile: same };
  }
  const other = resolveName(marker.name, secondary);
  if (other) {
    notes.push(`step ${n}: ${label} ${marker.name} names a ${marker.kind === 'tool' ? 'profile' : 'tool'}; used it as one`);
    return marker.kind === 'tool' ? { kind: 'agent', profile: other } : { kind: 'tool', name: other };
  }
  notes.push(`step ${n}: unknown ${marker.kind === 'tool' ? 'tool' : 'profile'} ${marker.name}; treated as SELF`);
  return { kind: 'self' };
}

/** The known name `name` refers to, tolerating case, `-` vs `_` and a `functions.` prefix. */
function resolveName(name: string, known: readonly string[]): string | undefined {
  if (known.includes(name)) return name;
  const key = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]/g, '');
  const candidates = [name, name.split(/[./]/).at(-1) ?? name];
  for (const candidate of candidates) {
    const hit = known.find((k) => key(k) === key(candidate));
    if (hit) return hit;
  }
  return undefined;
}

function clean(text: string): string {
  return text.replace(/\*\*|__/g, '').replace(/\s+/g, ' ').trim();
}
