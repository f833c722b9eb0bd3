/**
 * Context markers (SPEC §7.11): a Markdown note under `.agent/.context-markers/` recording where a
 * loop ended, so the next session (navi or navigator) can pick the work up.
 *
 * File names, sortable by time and then by task:
 *   complete → `.agent/.context-markers/{YYYY-MM-DD-HHmm}_{name}.md`
 *   partial  → `.agent/.context-markers/{YYYY-MM-DD-HHmm}_{name}_loop-partial.md`
 *   aborted  → `.agent/.context-markers/{YYYY-MM-DD-HHmm}_{name}_loop-aborted.md`
 * `partial` is for a person's decision to stop (Abort at an approval or stagnation prompt) and
 * for runs that stop resumable (max iterations, budget); `aborted` is for the runner giving up
 * (stagnation without never_pause, the third diversification). The time is local, as a user
 * reading the folder expects.
 */

import { mkdir, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { IndicatorState } from './indicators.js';
import type { Phase } from './phase.js';
import { indicatorLines, taskLine } from './status-block.js';
import { resolveInside } from '../tools/paths.js';
import { errnoCode } from '../util/guards.js';

/** The markers folder, relative to the run's working directory (navigator's location). */
export const MARKER_DIR = '.agent/.context-markers';

/** Which ending a marker records. */
export type MarkerKind = 'complete' | 'partial' | 'aborted';

/** Longest task slug in a file name; the full name is inside the file. */
const MAX_SLUG = 60;

/** Attempts at a free file name when markers collide within one minute. */
const MAX_SUFFIX = 100;

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** `YYYY-MM-DD-HHmm` in local time. */
export function markerStamp(date: Date): string {
  return (
    `${pad(date.getFullYear(), 4)}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}-` +
    `${pad(date.getHours())}${pad(date.getMinutes())}`
  );
}

/** A task name made safe for a file name: `[A-Za-z0-9._-]`, no leading dot, at most 60 characters. */
export function markerSlug(name: string): string {
  const slug = name
    .trim()
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, MAX_SLUG)
    .replace(/[-.]+$/, '');
  return slug === '' ? 'task' : slug;
}

/** The marker's path relative to the working directory (see the module comment for the scheme). */
export function markerFileName(date: Date, name: string, kind: MarkerKind): string {
  const suffix = kind === 'complete' ? '' : `_loop-${kind}`;
  return `${MARKER_DIR}/${markerStamp(date)}_${markerSlug(name)}${suffix}.md`;
}

/** True when a relative path is inside the markers folder (an agent-written marker counts too). */
export function isMarkerPath(path: string): boolean {
  const p = path.replace(/\\/g, '/').replace(/^\.\//, '');
  return p.startsWith(`${MARKER_DIR}/`) && p.endsWith('.md');
}

/** What a marker records. */
export interface MarkerInput {
  /** How the loop ended. */
  kind: MarkerKind;
  /** The task's name. */
  name: string;
  /** The task prompt (its first line is shown). */
  task: string;
  /** When the loop ended. */
  date: Date;
  /** The loop run's id, when stored. */
  runId?: string;
  /** Last iteration reached. */
  iteration: number;
  /** max_iterations (after extensions). */
  maxIterations: number;
  /** Phase of the last iteration. */
  phase: Phase;
  /** State hash of the last iteration. */
  stateHash: string;
  /** Indicators of the last iteration. */
  indicators: IndicatorState;
  /** Why the loop ended: the gate's reason, `user_aborted`, `stagnation`… */
  reason: string;
  /** What was done (and, for partial/aborted, what is left), one item per line. */
  summary: readonly string[];
}

const TITLES: Readonly<Record<MarkerKind, string>> = {
  complete: 'Loop complete',
  partial: 'Loop stopped (partial)',
  aborted: 'Loop aborted',
};

/** The marker's Markdown text. */
export function renderMarker(m: MarkerInput): string {
  const lines = [
    `# ${TITLES[m.kind]}: ${m.name}`,
    '',
    `- Task: ${taskLine(m.task)}`,
    `- Status: ${m.kind}`,
    `- Reason: ${m.reason}`,
    `- Iteration: ${m.iteration}/${m.maxIterations}`,
    `- Phase: ${m.phase}`,
    `- State hash: ${m.stateHash}`,
    ...(m.runId === undefined ? [] : [`- Run: ${m.runId}`]),
    `- Created: ${m.date.toISOString()}`,
    '',
    '## Completion indicators',
    '',
    ...indicatorLines(m.indicators).map((l) => `-${l.slice(1)}`),
    '',
    '## Summary',
    '',
    ...(m.summary.length > 0 ? m.summary.map((s) => `- ${s}`) : ['- (no summary)']),
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * The markers folder's real path, when it is inside `cwd`. The working directory is the
 * model's: `.agent` (or the folder in it) may be a symlink, and a marker must not be written
 * wherever it leads.
 */
export function markerDirInside(cwd: string): { ok: true; abs: string } | { ok: false; reason: string } {
  const resolved = resolveInside(cwd, MARKER_DIR);
  return resolved.ok ? { ok: true, abs: resolved.abs } : { ok: false, reason: `${resolved.reason}; no marker written` };
}

/**
 * Writes the marker under `cwd`, creating the folders; never overwrites (a second marker in the
 * same minute gets `-2`, `-3`… before `.md`), and never follows a symlink out of `cwd` (the
 * folder is checked before and after it is created; the file is created exclusively, so a
 * symlink in its place is not followed either). Returns the path written, relative to `cwd`.
 */
export async function writeMarker(cwd: string, m: MarkerInput): Promise<string> {
  const base = markerFileName(m.date, m.name, m.kind);
  const before = markerDirInside(cwd);
  if (!before.ok) throw new Error(before.reason);
  await mkdir(before.abs, { recursive: true });
  // Checked again: a folder swapped for a symlink while it was being created.
  const dir = markerDirInside(cwd);
  if (!dir.ok) throw new Error(dir.reason);
  const text = renderMarker(m);
  for (let n = 1; n <= MAX_SUFFIX; n++) {
    const rel = n === 1 ? base : base.replace(/\.md$/, `-${n}.md`);
    try {
      await writeFile(join(dir.abs, basename(rel)), text, { flag: 'wx' });
      return rel;
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST') throw err;
    }
  }
  throw new Error(`${MARKER_DIR}: more than ${MAX_SUFFIX} markers named ${base} this minute`);
}
