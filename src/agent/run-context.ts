/**
 * What the tools that act on the turn itself (plan, spawn_agent, switch_profile,
 * remember/forget) may ask of it. Seed 000 passes this in ContextVars; navi hands it to every
 * tool call in its `ToolContext` (`host`, `agentPath`): a sub-agent's tools get the sub-agent's
 * turn, and nothing needs restoring when it returns. (An AsyncLocalStorage did this before: it
 * turns on a hook for every promise the process creates, a cost on every database call and
 * streamed chunk.)
 */
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
