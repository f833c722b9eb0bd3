/**
 * The loop's counters, held by the runner and mirrored in the run row after every iteration
 * (SPEC §7): iteration, max, the hash history since the last reset, stagnation count,
 * diversifications and spent tokens — plus what the next iteration needs (the last status
 * block and the runner's notes). A resumed run rebuilds this from the run row and its last
 * committed iteration; a fresh run starts empty and inherits nothing.
 */
import { LoopModeSchema, type LoopModeConfig } from '../config/schema.js';
import { StorageError } from '../errors.js';
import type { LoopIterationRecord, LoopRunRecord } from '../store/types.js';
import { isRecord } from '../util/guards.js';
import { indicatorStateFrom } from './evaluate.js';
import { INDICATOR_NAMES, type IndicatorState, type IndicatorValues } from './indicators.js';
import { PHASES, type Phase } from './phase.js';
import type { RunOwner } from './ownership.js';
import type { Task } from './task-file.js';

/** The run's `config` column. */
export interface RunConfigRecord {
  /** Effective loop_mode settings. */
  loop_mode: LoopModeConfig;
  /** Profile the iterations run with. */
  profile: string;
  /** Seconds one iteration's turn may take. */
  iteration_timeout_s: number;
  /** The process driving the run (see ownership.ts). */
  owner: RunOwner;
}

/** What the last committed iteration left (for markers, blocks and the result). */
export interface LastIteration {
  phase: Phase;
  indicators: IndicatorState;
  hash: string;
}

/** The runner's mutable state. */
export interface LoopState {
  /** Last committed iteration (0 before the first). */
  iteration: number;
  maxIterations: number;
  /** Recorded hashes since the last reset (Continue at stagnation, a diversification). */
  hashHistory: string[];
  stagnationCount: number;
  diversifications: number;
  promptTokens: number;
  completionTokens: number;
  /** Last recorded hash of the run (the status block's Previous Hash). */
  previousHash: string | null;
  /** The last status block (goes into the next iteration's message). */
  previousStatus: string | null;
  /** The runner's notes for the next iteration. */
  notes: string[];
  /** Files changed since start as of the last iteration (what git cannot tell: tool writes outside git). */
  changedSinceStart: string[];
  last: LastIteration | null;
}

/** A fresh state for a new run. */
export function freshState(maxIterations: number): LoopState {
  return {
    iteration: 0,
    maxIterations,
    hashHistory: [],
    stagnationCount: 0,
    diversifications: 0,
    promptTokens: 0,
    completionTokens: 0,
    previousHash: null,
    previousStatus: null,
    notes: [],
    changedSinceStart: [],
    last: null,
  };
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

function indicatorValues(v: unknown): IndicatorValues | null {
  if (!isRecord(v)) return null;
  const out = {} as IndicatorValues;
  for (const name of INDICATOR_NAMES) {
    const x = v[name];
    if (x !== true && x !== false && x !== 'skipped') return null;
    out[name] = x;
  }
  return out;
}

/** The state of a stored run, from its row and its last committed iteration. */
export function restoreState(run: LoopRunRecord, last: LoopIterationRecord | undefined): LoopState {
  const state: LoopState = {
    ...freshState(run.maxIterations),
    iteration: run.iteration,
    hashHistory: [...run.hashHistory],
    stagnationCount: run.stagnationCount,
    diversifications: run.diversifications,
    promptTokens: run.promptTokens,
    completionTokens: run.completionTokens,
  };
  if (last === undefined) return state;
  state.previousHash = last.stateHash;
  state.previousStatus = last.statusBlock;
  const decision = isRecord(last.decision) ? last.decision : {};
  state.notes = strings(decision.notes_for_next);
  state.changedSinceStart = isRecord(last.evidence) ? strings(last.evidence.files_changed_since_start) : [];
  const values = indicatorValues(last.indicators);
  const phase = (PHASES as readonly string[]).includes(last.phase) ? (last.phase as Phase) : 'INIT';
  if (values !== null) state.last = { phase, indicators: indicatorStateFrom(values), hash: last.stateHash };
  return state;
}

/** The stored config of a run, checked (a row written by another version may differ). */
export function runConfigOf(run: LoopRunRecord): RunConfigRecord {
  const c = run.config;
  const loop = isRecord(c) ? LoopModeSchema.safeParse(c.loop_mode) : undefined;
  if (!isRecord(c) || loop === undefined || !loop.success || typeof c.profile !== 'string') {
    throw new StorageError('run_unreadable', `Loop run ${run.id} has a configuration this navi cannot read; start a new run.`);
  }
  const timeout = typeof c.iteration_timeout_s === 'number' && c.iteration_timeout_s > 0 ? c.iteration_timeout_s : 1800;
  const owner = isRecord(c.owner) ? (c.owner as unknown as RunOwner) : { pid: 0, host: '', since: '' };
  return { loop_mode: loop.data, profile: c.profile, iteration_timeout_s: timeout, owner };
}

/** The stored task of a run, checked. */
export function runTaskOf(run: LoopRunRecord): Task {
  const t = run.task;
  if (!isRecord(t) || typeof t.prompt !== 'string' || typeof t.name !== 'string' || !Array.isArray(t.checks)) {
    throw new StorageError('run_unreadable', `Loop run ${run.id} has a task this navi cannot read; start a new run.`);
  }
  return t as unknown as Task;
}
