/**
 * Per-run context (seed 000's ContextVars): which session, model and working directory the
 * code running right now belongs to, and the running turn's host for the tools that act on
 * the turn itself (plan, spawn_agent, switch_profile, remember/forget). A sub-agent runs
 * inside its own `runWithContext`, so the parent's values come back by themselves when it
 * returns or fails.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ToolResult } from '../tools/types.js';

/** What agent-level tools may ask of the turn that is running them. */
export interface TurnHost {
  /** Runs the planning pipeline (seed 000 "Planning"); `reason` → re-plan. */
  plan(args: { reason?: string; updated_goal?: string }): Promise<ToolResult>;
  /** Runs a sub-agent to completion (blocking) and returns its answer. */
  spawnAgent(args: SpawnArgs): Promise<ToolResult>;
  /** Switches profile from the next model call on. */
  switchProfile(profileId: string): Promise<ToolResult>;
  remember(fact: string): Promise<ToolResult>;
  forget(id: string): Promise<ToolResult>;
}

export interface SpawnArgs {
  task: string;
  profile_id?: string;
  exclude_tools?: string[];
  briefing?: string;
  timeout_seconds?: number;
  max_iterations?: number;
  context_transfer?: string;
  custom_system_prompt?: string;
  inherit_system_prompt?: boolean;
}

export interface RunContext {
  sessionId: string;
  model: string;
  cwd: string;
  user: string;
  /** Profile ids from the root agent down to the current one. */
  agentPath: string[];
  /** The running turn; absent outside an agent run (tools then report "not available"). */
  host?: TurnHost;
}

const storage = new AsyncLocalStorage<RunContext>();

export function runWithContext<T>(ctx: RunContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

export function currentRunContext(): RunContext | undefined {
  return storage.getStore();
}
