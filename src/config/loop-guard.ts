/**
 * Seed 004's safety guard: `never_pause_on_stagnation: true` turns stagnation into
 * auto-diversification, so nothing but max_iterations stops a loop on a broken task. That cap
 * must be chosen by someone, not inherited: the default of 5 is fine when written down.
 */

import { InvalidInputError } from '../errors.js';

/** The minimal loop settings the guard looks at. */
export interface LoopGuardInput {
  never_pause_on_stagnation: boolean;
}

/**
 * True when some layer of raw input (config file, task `loop` block, flag) wrote
 * `loop_mode.max_iterations` itself; `layers` are the raw loop_mode objects, any order.
 */
export function isMaxIterationsExplicit(layers: readonly unknown[]): boolean {
  return layers.some(
    (layer) =>
      typeof layer === 'object' &&
      layer !== null &&
      !Array.isArray(layer) &&
      (layer as Record<string, unknown>).max_iterations !== undefined,
  );
}

/**
 * Throws InvalidInputError (`config_invalid`, exit 2) when the guard is violated. `where` names
 * who turned never_pause_on_stagnation on (`.nav-config.json: loop_mode`, a task file, a flag).
 */
export function assertLoopSafety(loop: LoopGuardInput, maxIterationsExplicit: boolean, where: string): void {
  if (!loop.never_pause_on_stagnation || maxIterationsExplicit) return;
  throw new InvalidInputError(
    'config_invalid',
    `${where}: never_pause_on_stagnation is true but max_iterations is not set explicitly; ` +
      'an unattended loop that never pauses needs a written-down cap. ' +
      'Add "max_iterations" (1-20, e.g. 5) next to it, or pass --max-iterations',
  );
}
