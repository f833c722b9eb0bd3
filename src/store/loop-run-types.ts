/**
 * The loop-mode part of the repository contract (SPEC §7, §9): a run's row holds everything a
 * resumed run restores (counters, hash history, diversifications, spent tokens); each completed
 * iteration is one row committed together with those counters.
 *
 * The JSON values (task, config, indicators, evidence, signal, decision) are whatever the loop
 * runner passes: stored as JSON text and parsed back with the same keys in the same order. The
 * store does not interpret them.
 */

/** Where a run stands. `running` also covers a run whose process died (resume decides). */
export type LoopRunStatus =
  | 'running'
  | 'completed'
  | 'incomplete'
  | 'aborted'
  | 'budget_exhausted'
  | 'interrupted'
  | 'failed';

/** What `loopRuns.create` needs; counters start at zero and the status at `running`. */
export interface NewLoopRun {
  /** Default: a new time-sortable `run_…` id (see `newRunId`). */
  id?: string;
  /** The run's session (kind `loop`); deleting it deletes the run. */
  sessionId: string;
  /** The task's `name` (file name or given). */
  taskName: string;
  /** The task as loaded (JSON-serialisable). */
  task: unknown;
  /** The effective loop configuration (JSON-serialisable). */
  config: unknown;
  /** Absolute working directory of the run. */
  cwd: string;
  maxIterations: number;
  /** Token budget of the whole run; null: none. */
  maxTokens?: number | null;
  /** Wall-clock deadline of the whole run; null: none. */
  deadlineAt?: Date | null;
  /** `git rev-parse HEAD` when the run started; null outside git or before the first commit. */
  gitHeadAtStart?: string | null;
}

/** A stored run (`loop_runs`). */
export interface LoopRunRecord {
  id: string;
  sessionId: string;
  taskName: string;
  task: unknown;
  config: unknown;
  cwd: string;
  status: LoopRunStatus;
  /** Why it ended (or was blocked); null while running normally. */
  reason: string | null;
  /** The last completed iteration; 0 before the first one commits. */
  iteration: number;
  maxIterations: number;
  /** Consecutive equal state hashes counted so far (reset by a diversification). */
  stagnationCount: number;
  /** State hashes of the recorded iterations, oldest first. */
  hashHistory: string[];
  /** Auto-diversifications so far (the third aborts the run). */
  diversifications: number;
  /** Tokens spent by the whole run so far. */
  promptTokens: number;
  completionTokens: number;
  maxTokens: number | null;
  deadlineAt: Date | null;
  gitHeadAtStart: string | null;
  startedAt: Date;
  /** Bumped by every update and committed iteration. */
  updatedAt: Date;
  /** Set when the run reached a final status; null while running or resumable. */
  finishedAt: Date | null;
}

/**
 * Fields `loopRuns.update` and `commitIteration` set. Values are absolute (the runner owns the
 * counters and writes what it holds), not increments; an absent key is left unchanged.
 */
export interface LoopRunPatch {
  status?: LoopRunStatus;
  reason?: string | null;
  iteration?: number;
  /** Raised by `--extend N`. */
  maxIterations?: number;
  stagnationCount?: number;
  hashHistory?: string[];
  diversifications?: number;
  promptTokens?: number;
  completionTokens?: number;
  maxTokens?: number | null;
  deadlineAt?: Date | null;
  /** The effective configuration, when a resume changes it. */
  config?: unknown;
  finishedAt?: Date | null;
}

/** One completed iteration as the runner recorded it. */
export interface NewLoopIteration {
  /** 1-based; unique within the run. */
  iteration: number;
  /** INIT | RESEARCH | IMPL | VERIFY | COMPLETE. */
  phase: string;
  /** The six indicator values (JSON-serialisable). */
  indicators: unknown;
  /** What the runner observed (JSON-serialisable). */
  evidence: unknown;
  /** Navigator-compatible 6-hex state hash. */
  stateHash: string;
  /** The exit gate's decision; null when the iteration ended before the gate. */
  gateDecision: string | null;
  gateReason: string | null;
  /** The accepted or refused exit signal; null: none. */
  exitSignal: unknown;
  /** The rendered NAVIGATOR_STATUS block. */
  statusBlock: string;
  /** The approval / stagnation / max-iterations decision taken; null: none. */
  decision: unknown;
  /** Tokens this iteration spent. */
  promptTokens: number;
  completionTokens: number;
  durationMs: number;
  startedAt: Date;
  finishedAt: Date;
}

/** A stored iteration (`loop_iterations`). */
export interface LoopIterationRecord extends NewLoopIteration {
  runId: string;
}

export interface LoopRunRepository {
  /** Stores a new run (`run_exists`, `session_not_found` on failure) and returns it. */
  create(run: NewLoopRun): Promise<LoopRunRecord>;
  get(id: string): Promise<LoopRunRecord | null>;
  /** Newest first (by start time). */
  list(opts?: { limit?: number }): Promise<LoopRunRecord[]>;
  /** Applies `patch` and bumps `updated_at`; returns the row after it (`run_not_found`). */
  update(id: string, patch: LoopRunPatch): Promise<LoopRunRecord>;
  /**
   * Stores a completed iteration and updates the run in one transaction (SPEC §7: every
   * iteration committed before the next starts; a crash never leaves half of one). The run's
   * `iteration` becomes `row.iteration`. Fails with `iteration_exists` when that iteration is
   * already stored (nothing is written), `run_not_found` for an unknown run.
   */
  commitIteration(runId: string, row: NewLoopIteration, runPatch: LoopRunPatch): Promise<LoopRunRecord>;
  /**
   * Replaces the `decision` of a stored iteration and updates the run in one transaction: an
   * iteration committed before a person was asked (its decision pending) gets the answer and
   * what it led to. `iteration_not_found` / `run_not_found` when either row is missing.
   */
  settleIteration(runId: string, iteration: number, decision: unknown, runPatch: LoopRunPatch): Promise<LoopRunRecord>;
  /** The run's iterations in order. */
  listIterations(runId: string): Promise<LoopIterationRecord[]>;
}
