/**
 * Tools that act on the running turn rather than the world: `plan`, `spawn_agent`,
 * `switch_profile`, `remember`, `forget`. Like seed 000's ContextVar wiring, each finds the
 * running turn through the per-run context and reports "not available" outside a run.
 */
import { z } from 'zod';
import { defineTool } from '../tools/define-tool.js';
import type { ToolContext, ToolDefinition, ToolResult, TurnHost } from '../tools/types.js';

function withHost(name: string, ctx: ToolContext, fn: (host: TurnHost) => Promise<ToolResult>): Promise<ToolResult> {
  const { host } = ctx;
  if (!host) return Promise.resolve({ ok: false, output: `${name} is not available outside an agent run` });
  return fn(host);
}

const optionalInt = z.coerce.number().int().positive().optional();

export const planTool = defineTool({
  name: 'plan',
  description: 'Plan a multi-step task: analyse it, then write numbered steps into the todo list. With reason: re-plan.',
  schema: z.object({
    reason: z.string().optional().describe('why re-plan (omit for a first plan)'),
    updated_goal: z.string().optional(),
  }),
  execute: (args, ctx) => withHost('plan', ctx, (h) => h.plan(args)),
});

export const spawnAgentTool = defineTool({
  name: 'spawn_agent',
  description: 'Run a sub-agent on a bounded subtask and get its answer. Give a precise task and what to return.',
  schema: z.object({
    task: z.string().min(1),
    profile_id: z.string().optional(),
    exclude_tools: z.array(z.string()).optional(),
    briefing: z.string().optional().describe('context the sub-agent needs'),
    timeout_seconds: optionalInt,
  }),
  execute: (args, ctx) => withHost('spawn_agent', ctx, (h) => h.spawnAgent(args)),
});

export const switchProfileTool = defineTool({
  name: 'switch_profile',
  description: 'Switch to another profile (tools and instructions) from the next step on.',
  schema: z.object({ profile_id: z.string().min(1) }),
  execute: (args, ctx) => withHost('switch_profile', ctx, (h) => h.switchProfile(args.profile_id)),
});

export const rememberTool = defineTool({
  name: 'remember',
  description: 'Store a lasting fact about the user or their preferences for future sessions.',
  schema: z.object({ fact: z.string().min(1).max(500) }),
  execute: (args, ctx) => withHost('remember', ctx, (h) => h.remember(args.fact)),
});

export const forgetTool = defineTool({
  name: 'forget',
  description: 'Delete a remembered fact by its id.',
  schema: z.object({ id: z.string().min(1) }),
  execute: (args, ctx) => withHost('forget', ctx, (h) => h.forget(args.id)),
});

/** The agent-level tools, to register beside the built-ins. */
export function agentTools(): ToolDefinition[] {
  return [planTool, spawnAgentTool, switchProfileTool, rememberTool, forgetTool] as ToolDefinition[];
}
