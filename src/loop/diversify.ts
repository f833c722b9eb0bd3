/**
 * Auto-diversification (seed 004, SPEC §7.8): with `never_pause_on_stagnation`, a stuck headless
 * loop is not paused but told to change approach — combine previous near-misses, try something
 * radically different, or re-read the task and files. The instructions are written for the model
 * and live in `prompts/loop/<strategy>.md` at the repository root (prompts live in files, not in
 * code strings). Diversifying is not free: the third time in one run, the loop aborts instead.
 */

import type { DiversifyStrategy } from '../config/schema.js';
import { INDICATOR_LABELS, type IndicatorName } from './indicators.js';
import type { Phase } from './phase.js';
import type { StagnationResult } from './stagnation.js';
import { taskLine } from './status-block.js';
import { loadPrompt } from '../prompts.js';

/** Diversifications a run may make; seed 004 escalates the third to the abort path. */
export const MAX_DIVERSIFICATIONS = 2;

/** What the instruction tells the model about its situation. */
export interface DiversifyContext {
  /** The task prompt (its first line is quoted). */
  task: string;
  /** The phase of the stuck iteration. */
  phase: Phase;
  /** Applicable indicators not met yet. */
  unmet: readonly IndicatorName[];
  /** The stagnation verdict that triggered this. */
  stagnation: StagnationResult;
  /** This diversification's number in the run, 1-based. */
  attempt: number;
}

/** What to do about a new stagnation when never_pause_on_stagnation is on. */
export type DiversifyDecision =
  /** Send the strategy's instruction, reset the stagnation history, count it. */
  | { action: 'diversify'; attempt: number }
  /** Stop the run: exit 4 with a `loop-aborted` marker. */
  | { action: 'abort'; reason: string };

/**
 * The counter rule: given how many diversifications this run already made, diversify again or,
 * on what would be the third, abort — repeated diversification means the task is stuck for good.
 */
export function nextDiversification(previousCount: number): DiversifyDecision {
  if (previousCount >= MAX_DIVERSIFICATIONS) {
    return {
      action: 'abort',
      reason: `stagnation persisted after ${previousCount} diversifications; the task needs manual intervention`,
    };
  }
  return { action: 'diversify', attempt: previousCount + 1 };
}

/** The strategy's template (`prompts/loop/<strategy>.md`, read once), ending with a newline. */
function template(strategy: DiversifyStrategy): string {
  return `${loadPrompt(`loop/${strategy}.md`)}\n`;
}

function stuckSentence(s: StagnationResult): string {
  return s.reason === 'oscillation'
    ? `Your last ${s.count} iterations cycled between the same ${s.period ?? 2} states.`
    : `Your last ${s.count} iterations ended in the same state.`;
}

/** The instruction for `strategy`, filled in from `context`; ends with a newline. */
export function diversifyInstruction(strategy: DiversifyStrategy, context: DiversifyContext): string {
  const values: Readonly<Record<string, string>> = {
    task: taskLine(context.task),
    phase: context.phase,
    unmet: context.unmet.length > 0 ? context.unmet.map((n) => INDICATOR_LABELS[n].toLowerCase()).join(', ') : 'none',
    stuck: stuckSentence(context.stagnation),
    attempt: String(context.attempt),
    allowed: String(MAX_DIVERSIFICATIONS),
  };
  return template(strategy).replace(/\{\{(\w+)\}\}/g, (whole, name: string) => {
    const value = values[name];
    // A placeholder we do not fill is a bug in the template file, not something to send the model.
    if (value === undefined) throw new Error(`prompts/loop/${strategy}.md: unknown placeholder ${whole}`);
    return value;
  });
}
