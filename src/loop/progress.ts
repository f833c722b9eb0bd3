/**
 * The status block's Progress percentage (navigator's calculate_progress, SPEC §7.6): a base
 * weight per phase plus up to 25 points for the share of applicable indicators met.
 */

import type { Phase } from './phase.js';

/** Base progress of each phase (seed 004). */
export const PHASE_WEIGHTS: Readonly<Record<Phase, number>> = {
  INIT: 10,
  RESEARCH: 25,
  IMPL: 50,
  VERIFY: 75,
  COMPLETE: 100,
};

/** Points the indicators add at most: a fully met VERIFY reaches 100. */
const INDICATOR_POINTS = 25;

/** min(100, trunc(weight + met/total × 25)); no applicable indicator adds nothing. */
export function computeProgress(phase: Phase, met: number, total: number): number {
  const bonus = total > 0 ? (met / total) * INDICATOR_POINTS : 0;
  return Math.min(100, Math.trunc(PHASE_WEIGHTS[phase] + bonus));
}
