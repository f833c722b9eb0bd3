/**
 * The text blocks of seed 004, rendered exactly in its layout: 52-character `━` rules, the
 * NAVIGATOR_STATUS block, the loop banner, LOOP COMPLETE, STAGNATION DETECTED, AUTO-DIVERSIFY
 * and MAX ITERATIONS REACHED. Blocks are returned without a trailing newline; blank lines are
 * empty (the seed's copy shows them as a single space, navigator's generator prints them empty).
 */

import { INDICATOR_LABELS, INDICATOR_NAMES, countMet, type IndicatorState } from './indicators.js';
import type { Phase } from './phase.js';
import { computeProgress } from './progress.js';
import type { StagnationResult } from './stagnation.js';
import { requiredHeuristics } from './gate.js';
import type { DiversifyStrategy } from '../config/schema.js';

/** The seed's rule line: 52 × U+2501. */
export const RULE = '━'.repeat(52);

/** Iterations the Extend choice adds at max iterations (seed 004). */
export const EXTEND_ITERATIONS = 3;

/** Longest task description shown in a block; a pasted prompt is not worth repeating whole. */
const MAX_TASK_CHARS = 100;

/** The first non-empty line of `text`, cut to MAX_TASK_CHARS. */
export function taskLine(text: string): string {
  const first = text.split('\n').map((l) => l.trim()).find((l) => l !== '') ?? '';
  return first.length > MAX_TASK_CHARS ? `${first.slice(0, MAX_TASK_CHARS - 1)}…` : first;
}

function block(title: string, body: readonly string[]): string {
  return [RULE, title, RULE, ...body, RULE].join('\n');
}

/** The six indicator lines: `  [x] Label`, `  [ ] Label`, `  [ ] Label (skipped - why)`. */
export function indicatorLines(state: IndicatorState): string[] {
  return INDICATOR_NAMES.map((name) => {
    const v = state.values[name];
    const label = INDICATOR_LABELS[name];
    if (v === 'skipped') return `  [ ] ${label} (skipped - ${state.skipped[name] ?? 'not applicable'})`;
    return `  [${v ? 'x' : ' '}] ${label}`;
  });
}

/** Everything a NAVIGATOR_STATUS block shows. */
export interface StatusBlockInput {
  /** Detected phase. */
  phase: Phase;
  /** This iteration, 1-based. */
  iteration: number;
  /** The run's max_iterations (after any extension). */
  maxIterations: number;
  /** This iteration's indicators. */
  indicators: IndicatorState;
  /** An accepted exit signal this iteration. */
  exitSignal: boolean;
  /** This iteration's state hash. */
  stateHash: string;
  /** The previous recorded hash; null on the first iteration (shown as `none`). */
  previousHash: string | null;
  /** Consecutive-equal count (or oscillation length). */
  stagnationCount: number;
  /** `stagnation_threshold`. */
  stagnationThreshold: number;
  /** What happens next (see nextAction in gate.ts). */
  nextAction: string;
}

/** The NAVIGATOR_STATUS fields as snake_case data, for the `iteration_status` event. */
export interface StatusFields {
  /** Detected phase. */
  phase: Phase;
  /** This iteration, 1-based. */
  iteration: number;
  /** max_iterations of the run. */
  max_iterations: number;
  /** Progress percentage (computeProgress). */
  progress: number;
  /** Each indicator: true, false or "skipped". */
  indicators: IndicatorState['values'];
  /** Why skipped indicators are skipped. */
  skipped: IndicatorState['skipped'];
  /** Met indicators. */
  heuristics_met: number;
  /** Applicable indicators. */
  heuristics_total: number;
  /** An accepted exit signal this iteration. */
  exit_signal: boolean;
  /** This iteration's state hash. */
  state_hash: string;
  /** The previous recorded hash, null on the first iteration. */
  previous_hash: string | null;
  /** Stagnation count shown as `Stagnation C/T`. */
  stagnation_count: number;
  /** stagnation_threshold. */
  stagnation_threshold: number;
  /** The Next Action line. */
  next_action: string;
}

/** The block's fields as data (progress computed the same way the block shows it). */
export function statusFields(input: StatusBlockInput): StatusFields {
  const { met, total } = countMet(input.indicators.values);
  return {
    phase: input.phase,
    iteration: input.iteration,
    max_iterations: input.maxIterations,
    progress: computeProgress(input.phase, met, total),
    indicators: { ...input.indicators.values },
    skipped: { ...input.indicators.skipped },
    heuristics_met: met,
    heuristics_total: total,
    exit_signal: input.exitSignal,
    state_hash: input.stateHash,
    previous_hash: input.previousHash,
    stagnation_count: input.stagnationCount,
    stagnation_threshold: input.stagnationThreshold,
    next_action: input.nextAction,
  };
}

/** The NAVIGATOR_STATUS block (seed 004 layout). */
export function renderStatusBlock(input: StatusBlockInput): string {
  const f = statusFields(input);
  return block('NAVIGATOR_STATUS', [
    `Phase: ${f.phase}`,
    `Iteration: ${f.iteration}/${f.max_iterations}`,
    `Progress: ${f.progress}%`,
    '',
    'Completion Indicators:',
    ...indicatorLines(input.indicators),
    '',
    'Exit Conditions:',
    `  Heuristics: ${f.heuristics_met}/${f.heuristics_total} (need ${requiredHeuristics(f.heuristics_total)}+)`,
    `  EXIT_SIGNAL: ${String(f.exit_signal)}`,
    '',
    `State Hash: ${f.state_hash}`,
    `Previous Hash: ${f.previous_hash ?? 'none'}`,
    `Stagnation: ${f.stagnation_count}/${f.stagnation_threshold}`,
    '',
    `Next Action: ${f.next_action}`,
  ]);
}

/** What the LOOP MODE ACTIVATED banner shows. */
export interface LoopBannerInput {
  /** The task prompt or name (first line shown). */
  task: string;
  /** max_iterations. */
  maxIterations: number;
  /** stagnation_threshold. */
  stagnationThreshold: number;
  /** The iteration about to start; > 1 when a run resumes. Default 1. */
  startIteration?: number;
}

/** The LOOP MODE ACTIVATED banner. */
export function renderLoopBanner(input: LoopBannerInput): string {
  return block('LOOP MODE ACTIVATED', [
    '',
    `Task: ${taskLine(input.task)}`,
    `Max iterations: ${input.maxIterations}`,
    `Stagnation threshold: ${input.stagnationThreshold}`,
    '',
    `Starting iteration ${input.startIteration ?? 1}...`,
  ]);
}

/** What the LOOP COMPLETE block shows. */
export interface LoopCompleteInput {
  /** The task prompt or name (first line shown). */
  task: string;
  /** Iterations run. */
  iterations: number;
  /** max_iterations (after extensions). */
  maxIterations: number;
  /** Phase of the last iteration (COMPLETE when ≥4 indicators met with the signal). */
  phase: Phase;
  /** Indicators of the last iteration. */
  indicators: IndicatorState;
  /** The last iteration had an accepted exit signal. */
  exitSignal: boolean;
  /** exit_requires_explicit_signal (a missing signal then reads "not required"). */
  requireExplicitSignal: boolean;
  /** Key changes, one per bullet. */
  summary: readonly string[];
}

/** The LOOP COMPLETE block. */
export function renderLoopComplete(input: LoopCompleteInput): string {
  const { met, total } = countMet(input.indicators.values);
  const heuristics = met >= requiredHeuristics(total) ? 'passed' : 'not met';
  const signal = input.exitSignal ? 'passed' : input.requireExplicitSignal ? 'not given' : 'not required';
  return block('LOOP COMPLETE', [
    '',
    `Task: ${taskLine(input.task)}`,
    `Iterations: ${input.iterations}/${input.maxIterations}`,
    `Final Phase: ${input.phase}`,
    '',
    'Completion Indicators:',
    ...indicatorLines(input.indicators),
    '',
    'Exit Conditions:',
    `  Heuristics: ${met}/${total} (${heuristics})`,
    `  EXIT_SIGNAL: ${String(input.exitSignal)} (${signal})`,
    '',
    'Summary:',
    ...(input.summary.length > 0 ? input.summary.map((s) => `- ${s}`) : ['- (no summary)']),
    '',
  ]);
}

function stuckLine(s: StagnationResult, lead: 'detected' | 'short'): string {
  if (s.reason === 'oscillation') {
    return `Oscillating between ${s.period ?? 2} states for ${s.count} iterations.`;
  }
  return lead === 'detected'
    ? `Same state detected for ${s.count} consecutive iterations.`
    : `Same state for ${s.count} iterations.`;
}

/** What the STAGNATION DETECTED block shows. */
export interface StagnationBlockInput {
  /** The verdict (same state or oscillation, and its count). */
  stagnation: StagnationResult;
  /** Current phase. */
  phase: Phase;
  /** Current indicators. */
  indicators: IndicatorState;
  /** The agent's last action, e.g. its last tool call. */
  lastAction: string;
}

/** The STAGNATION DETECTED block (interactive prompt text). */
export function renderStagnation(input: StagnationBlockInput): string {
  const { met, total } = countMet(input.indicators.values);
  return block('STAGNATION DETECTED', [
    '',
    stuckLine(input.stagnation, 'detected'),
    '',
    'Current State:',
    `  Phase: ${input.phase}`,
    `  Indicators: ${met}/${total}`,
    `  Last Action: ${input.lastAction}`,
    '',
    'Possible causes:',
    '1. Blocked by external dependency',
    '2. Unclear requirements',
    '3. Test failures preventing progress',
    '4. Missing context or permissions',
    '',
    'Options:',
    '1. [Continue] - Try one more iteration',
    "2. [Clarify] - Explain what's blocking",
    '3. [Abort] - End loop, manual intervention',
    '',
  ]);
}

/** What the AUTO-DIVERSIFY block shows. */
export interface DiversifyBlockInput {
  /** stagnation_diversify_strategy. */
  strategy: DiversifyStrategy;
  /** The verdict that triggered it. */
  stagnation: StagnationResult;
}

/** The STAGNATION → AUTO-DIVERSIFY block (headless, never_pause_on_stagnation). */
export function renderDiversify(input: DiversifyBlockInput): string {
  return block(`STAGNATION → AUTO-DIVERSIFY (${input.strategy})`, [
    '',
    `${stuckLine(input.stagnation, 'short')} Auto-recovery: ${input.strategy}`,
    'Stagnation counter reset.',
  ]);
}

/** What the MAX ITERATIONS REACHED block shows. */
export interface MaxIterationsInput {
  /** max_iterations reached. */
  maxIterations: number;
  /** Phase of the last iteration. */
  phase: Phase;
  /** Indicators of the last iteration. */
  indicators: IndicatorState;
  /** The last iteration had an accepted exit signal. */
  exitSignal: boolean;
  /** What was achieved, one per bullet. */
  progressMade: readonly string[];
}

/** The MAX ITERATIONS REACHED block. */
export function renderMaxIterations(input: MaxIterationsInput): string {
  const { met, total } = countMet(input.indicators.values);
  return block('MAX ITERATIONS REACHED', [
    '',
    `Completed ${input.maxIterations} iterations without full completion.`,
    '',
    'Current State:',
    `  Phase: ${input.phase}`,
    `  Indicators: ${met}/${total}`,
    `  EXIT_SIGNAL: ${String(input.exitSignal)}`,
    '',
    'Progress made:',
    ...(input.progressMade.length > 0 ? input.progressMade.map((s) => `- ${s}`) : ['- (none recorded)']),
    '',
    'Options:',
    `1. [Extend] - Add ${EXTEND_ITERATIONS} more iterations`,
    '2. [Complete] - Accept current state as done',
    '3. [Abort] - Exit without completion',
    '',
  ]);
}

/** The completion line printed in text mode: `{"v":2,"type":"exit","success":true,"reason":…}`. */
export function exitSignalLine(reason: string): string {
  return JSON.stringify({ v: 2, type: 'exit', success: true, reason });
}
