/**
 * What `navi serve` is given by the command that starts it (src/cli/commands/serve.ts): the open
 * store and the agent core, as functions. The server builds no second engine: a session's turn
 * is the agent's `runStream`, a loop run is the loop runner, both set up by the same code the CLI
 * commands use (config, profiles, tools, MCP), so the server cannot drift from the CLI.
 */
import type { AgentEvent } from '../agent/events.js';
import type { TurnOutcome } from '../agent/agent-types.js';
import type { DecisionSource } from '../loop/decisions.js';
import type { LoopRequest } from '../loop/loop-request.js';
import type { LoopOutcome } from '../loop/runner.js';
import type { Store } from '../store/types.js';

/** One chat turn to run. */
export interface TurnRequest {
  sessionId: string;
  /** True for the first turn of a session created by POST /sessions (its row is written then). */
  newSession: boolean;
  message: string;
  profileId: string;
  model: string;
  signal: AbortSignal;
}

/** A loop run to start (POST /runs): the loop request of `navi loop` and the queue, with the fields the API lets a caller set (api-schemas.ts `startRunBody`). */
export type { LoopRequest } from '../loop/loop-request.js';

/** What the server hands a loop it starts. */
export interface LoopControl {
  /** Answers approval / stagnation / max-iterations prompts (POST /runs/{id}/decisions). */
  decisions: DecisionSource;
  signal: AbortSignal;
  /** The run's ids, as soon as the runner stored the run. */
  onOpen: (ids: { runId: string; sessionId: string }) => void;
}

/** A loop run that was set up (task, config, runtime) and can now be driven. */
export interface StartedLoop {
  events: AsyncGenerator<AgentEvent, LoopOutcome>;
  /** Stops the run's MCP servers and the like (the shared store stays open). */
  close: () => Promise<void>;
}

/** A profile as GET /agents lists it. */
export interface AgentInfo {
  id: string;
  description: string;
  tools: string[];
  /** Why the profile cannot be used (a broken profile), else absent. */
  problem?: string;
}

export interface ServeDeps {
  store: Store;
  /** What a new session or run uses unless the request names another (the global flags, the config). */
  defaults: { profile: string; model: string; cwd: string };
  agents: () => AgentInfo[];
  /** Throws InvalidInputError for an unknown or unusable profile. */
  checkProfile: (id: string) => void;
  runTurn: (req: TurnRequest) => AsyncGenerator<AgentEvent, TurnOutcome>;
  /** Resolves the task and sets the run up; throws InvalidInputError for a bad task or option. */
  startLoop: (req: LoopRequest, control: LoopControl) => Promise<StartedLoop>;
  /** A line for the server's log (stderr). */
  log: (message: string) => void;
}
