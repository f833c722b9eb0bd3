/**
 * The six completion indicators of seed 004, derived from evidence (SPEC §7.3) instead of
 * claimed by the model. An indicator that cannot apply — no ticket configured, no git
 * repository to commit in — is `'skipped'`: shown, but excluded from met/total, so a task
 * without a ticket is not held to a bar it can never reach.
 */

import { isDocPath, type Evidence } from './evidence.js';

/** Indicator names in seed 004's display order; these are also the JSON keys users see. */
export const INDICATOR_NAMES = [
  'code_committed',
  'tests_passing',
  'code_simplified',
  'docs_updated',
  'ticket_closed',
  'marker_created',
] as const;

/** One of the six indicators. */
export type IndicatorName = (typeof INDICATOR_NAMES)[number];

/** Met, not met, or not applicable to this run (excluded from totals). */
export type IndicatorValue = boolean | 'skipped';

/** A value for every indicator. */
export type IndicatorValues = Record<IndicatorName, IndicatorValue>;

/** The indicators of one iteration. */
export interface IndicatorState {
  /** Each indicator's value. */
  values: IndicatorValues;
  /** Why a skipped indicator was skipped, shown in the status block: `no ticket`. */
  skipped: Partial<Record<IndicatorName, string>>;
}

/** The status-block label of each indicator (seed 004 wording). */
export const INDICATOR_LABELS: Readonly<Record<IndicatorName, string>> = {
  code_committed: 'Code changes committed',
  tests_passing: 'Tests passing',
  code_simplified: 'Code simplified',
  docs_updated: 'Documentation updated',
  ticket_closed: 'Ticket closed',
  marker_created: 'Marker created',
};

/** Skip reason when the task has no `ticket` (SPEC §7.6 prints exactly this). */
export const SKIP_NO_TICKET = 'no ticket';

/** Skip reason when nothing could test the work: no checks, and the agent ran no test command. */
export const SKIP_NO_TESTS = 'no checks or test command';

/** Skip reason outside git: commit evidence is unknown, not false. */
export const SKIP_NOT_GIT = 'unknown: not a git repository';

/**
 * `tests_passing`: with checks, every check exited 0 (a check that did not finish failed).
 * Without checks, the last test command the agent ran this iteration exited 0 — the last one,
 * because a green run followed by an edit and a red run is not passing. With neither there is
 * nothing to pass (a non-code task): skipped, not failed.
 */
function testsPassing(e: Evidence): IndicatorValue {
  if (e.checks.length > 0) return e.checks.every((c) => c.exitCode === 0);
  const last = e.testRuns[e.testRuns.length - 1];
  if (last === undefined) return 'skipped';
  return last.exitCode === 0;
}

/** Derives all six indicators from one iteration's evidence (SPEC §7.3). */
export function deriveIndicators(e: Evidence): IndicatorState {
  const skipped: Partial<Record<IndicatorName, string>> = {};
  let codeCommitted: IndicatorValue;
  if (e.gitRepo) {
    // Committed means the work is in history: at least one commit and nothing tracked left dirty.
    codeCommitted = e.commitsSinceStart > 0 && !e.uncommittedTrackedChanges;
  } else {
    codeCommitted = 'skipped';
    skipped.code_committed = SKIP_NOT_GIT;
  }
  let ticketClosed: IndicatorValue;
  if (e.ticket === null) {
    ticketClosed = 'skipped';
    skipped.ticket_closed = SKIP_NO_TICKET;
  } else {
    ticketClosed = e.ticket.exitCode === 0;
  }
  const testsPassed = testsPassing(e);
  if (testsPassed === 'skipped') skipped.tests_passing = SKIP_NO_TESTS;
  return {
    values: {
      code_committed: codeCommitted,
      tests_passing: testsPassed,
      code_simplified: e.codeSimplifiedDeclared,
      docs_updated: e.filesChangedSinceStart.some(isDocPath),
      ticket_closed: ticketClosed,
      marker_created: e.markerWritten,
    },
    skipped,
  };
}

/** Met and applicable counts: `met` true values out of `total` non-skipped ones. */
export function countMet(values: IndicatorValues): { met: number; total: number } {
  let met = 0;
  let total = 0;
  for (const name of INDICATOR_NAMES) {
    const v = values[name];
    if (v === 'skipped') continue;
    total++;
    if (v === true) met++;
  }
  return { met, total };
}

/** Names of the met indicators, in display order (what the state hash covers). */
export function metIndicatorNames(values: IndicatorValues): IndicatorName[] {
  return INDICATOR_NAMES.filter((name) => values[name] === true);
}

/** Names of the applicable indicators not met yet, in display order (for feedback to the model). */
export function unmetIndicatorNames(values: IndicatorValues): IndicatorName[] {
  return INDICATOR_NAMES.filter((name) => values[name] === false);
}

/** A state with every indicator false and nothing skipped (a starting point for tests and resumes). */
export function noIndicators(): IndicatorState {
  return {
    values: {
      code_committed: false,
      tests_passing: false,
      code_simplified: false,
      docs_updated: false,
      ticket_closed: false,
      marker_created: false,
    },
    skipped: {},
  };
}
