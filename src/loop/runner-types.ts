/**
 * The loop runner's inputs and its outcome. The runner takes its agent, store, git and decision
 * source as parameters (tests pass a scripted model and a real store), receives narrow options,
 * reads no environment and never writes to stdout: it yields events and returns an outcome.
 */
import type { AgentEvent } from '../agent/events.js';
import type { TurnOptions, TurnOutcome } from '../agent/agent-types.js';
import type { LoopModeConfig } from '../config/schema.js';
import type { ExitStatus } from '../errors.js';
import type { Notifier } from '../notify/notifier.js';
import type { LoopRunRecord, Store } from '../store/types.js';
import type { DecisionSource } from './decisions.js';
import type { GitProbe } from './git-probe.js';
import type { IndicatorValues } from './indicators.js';
import type { RunOwner } from './ownership.js';
import type { Task } from './task-file.js';

/** Turn settings every iteration shares (model, cwd, shell policy…); the runner adds the rest. */
export type LoopTurnBase = Omit<TurnOptions, 'sessionId' | 'newSession' | 'message' | 'profileId' | 'signal' | 'kind' | 'extraTools'>;

/** What starts (or resumes) a run. */
export interface LoopRunOptions {
  /** The task (for a resume: the stored one). */
  task: Task;
  /** Effective loop_mode settings (for a resume: the stored ones). */
  loop: LoopModeConfig;
  profileId: string;
  turn: LoopTurnBase;
  /** SIGINT/SIGTERM: the run stops, saves, and ends `interrupted` (resumable). */
  signal: AbortSignal;
  /** Token budget of the whole run (prompt + completion); null: none. */
  maxTokens: number | null;
  /** When the whole run must end; null: no deadline. */
  deadlineAt: Date | null;
  /** How long one iteration's agent turn may take. */
  iterationTimeoutMs: number;
  decisions: DecisionSource;
  owner: RunOwner;
  /** Continue this stored run (validated by prepareResume) instead of starting a new one. */
  resume?: {
    run: LoopRunRecord;
    extend: number;
    /** `--clarify TEXT`: told to the model in the next iteration; an aborted run starts over its stagnation count. */
    clarify?: string;
  };
  /** Called once the run exists, before its first event (the CLI sets the event envelope). */
  onOpen?: (ids: { runId: string; sessionId: string }) => void;
  /** Where to tell a person the run waits on them, failed or ended (notify-hook.ts); absent: nobody. */
  notifier?: Notifier;
  /** The run's page, linked from notifications: `navi serve` passes `id => http://host:port/#/runs/${id}`. */
  pageUrl?: (runId: string) => string;
  /** How long the end of the run waits for notifications still being sent (default 5 s). */
  notifyGraceMs?: number;
}

/** The agent as the runner uses it: one turn as a stream of events. */
export interface LoopAgent {
  runStream(opts: TurnOptions): AsyncGenerator<AgentEvent, TurnOutcome>;
}

/** What the runner works with. */
export interface LoopDeps {
  agent: LoopAgent;
  store: Store;
  /** Default: the system git. */
  git?: GitProbe;
  /** Default: Date.now. */
  now?: () => number;
  /** Receives how long each part of an iteration's bookkeeping took (benchmarks; default: nothing). */
  timing?: (phase: BookkeepingPhase, ms: number) => void;
}

/** The parts of an iteration the runner itself spends time on (the model's turn is not one). */
export type BookkeepingPhase = 'pre_turn' | 'evidence' | 'checks' | 'evaluate' | 'commit';

/** How a loop ended (stored as the run's status). */
export type LoopEndStatus = 'completed' | 'incomplete' | 'aborted' | 'budget_exhausted' | 'interrupted' | 'failed';

/** The exit status of each ending (SPEC §4: 0 completed, 3 incomplete, 4 aborted, 5 budget, 130 interrupted, 1 failed). */
export const LOOP_EXIT_STATUS: Readonly<Record<LoopEndStatus, ExitStatus>> = {
  completed: 'success',
  incomplete: 'incomplete',
  aborted: 'aborted',
  budget_exhausted: 'budget_exhausted',
  interrupted: 'interrupted',
  failed: 'error',
};

/** What the runner returns when it stops. */
export interface LoopOutcome {
  status: LoopEndStatus;
  /** Machine-readable: gate_passed, user_completed, max_iterations, user_aborted, stagnation, oscillation, max_tokens, deadline, iteration_timeout, interrupted, context_too_large. */
  reason: string;
  /** One line for the user when it did not succeed (null when it did). */
  message: string | null;
  runId: string;
  sessionId: string;
  /** Last committed iteration. */
  iterations: number;
  maxIterations: number;
  /** The last committed iteration's indicators and hash (null before the first). */
  indicators: IndicatorValues | null;
  stateHash: string | null;
  /** The last agent turn's final text. */
  finalText: string;
  /** Model calls made by this invocation. */
  modelCalls: number;
  /** Tokens of the whole run, restored ones included. */
  usage: { promptTokens: number; completionTokens: number };
  /** Marker written, relative to cwd. */
  marker: string | null;
}

/** Statuses a run can be resumed from. */
export const RESUMABLE: ReadonlySet<string> = new Set(['running', 'incomplete', 'budget_exhausted', 'interrupted', 'failed']);
