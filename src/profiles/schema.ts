/**
 * Validation of `profiles/<id>/config.json`: seed 000's thinking-mechanics flags with their
 * defaults, strict (a misspelt flag would otherwise silently keep its default).
 */

import { z } from 'zod';
import { bool, intAtLeast, intBetween, numberBetween, text } from '../config/fields.js';
import type { ProfileSettings } from './types.js';

/** Tools a profile gets when its config.json has no `tools.agent`: the general agent's set. */
export const DEFAULT_AGENT_TOOLS: readonly string[] = Object.freeze([
  'read_file',
  'write_file',
  'edit_file',
  'list_dir',
  'search_files',
  'shell',
  'todo',
  'scratchpad',
  'plan',
  'spawn_agent',
  'switch_profile',
  'remember',
  'forget',
]);

const toolName = z
  .string({ error: 'must be a tool name' })
  .regex(/^[A-Za-z_][A-Za-z0-9_-]*$/, { error: 'must be a tool name (letters, digits, "_" or "-")' });
const toolList = z.array(toolName, { error: 'must be an array of tool names' });
/** `server`, `server/tool` or `*` (every server): MCP tools the profile offers. */
const mcpEntry = z
  .string({ error: 'must be an MCP server name, "server/tool" or "*"' })
  .regex(/^(?:\*|[A-Za-z0-9][A-Za-z0-9_-]*(?:\/.+)?)$/, { error: 'must be an MCP server name, "server/tool" or "*"' });

/** A profile's config.json. */
export const ProfileSettingsSchema = z.strictObject({
  description: z.string({ error: 'must be a string' }).default(''),
  model: text().optional(),
  temperature: numberBetween(0, 2).optional(),
  think_enabled: bool().default(true),
  planning_enabled: bool().default(true),
  iteration_budget_enabled: bool().default(true),
  goal_anchoring_enabled: bool().default(true),
  goal_anchoring_interval: intAtLeast(1).default(5),
  anti_stall_enabled: bool().default(true),
  anti_stall_threshold: intAtLeast(1).default(8),
  step_validation_enabled: bool().default(false),
  subagent_planning_enabled: bool().default(false),
  /** After each turn, ask the model for lasting facts about the user and remember them. */
  memory_extraction_enabled: bool().default(false),
  /** Offer the project's user tools (./tools/, tools.paths) beside the listed tools. */
  user_tools_enabled: bool().default(true),
  // A turn of more than a few hundred tool calls is a runaway, not a plan.
  max_iterations: intBetween(1, 500).default(40),
  tools: z
    .strictObject({
      agent: toolList.default(() => [...DEFAULT_AGENT_TOOLS]),
      subagent: toolList.default(() => []),
      /** MCP tools offered (agent and sub-agent); absent → every configured server's, [] → none. */
      mcp: z.array(mcpEntry, { error: 'must be an array of MCP server names or "server/tool"' }).optional(),
    })
    .prefault({}),
  subagent_system_prompt: text().optional(),
  compression_keep_recent: intAtLeast(1).optional(),
  compression_max_tokens: intAtLeast(1).optional(),
  compression_prompt_file: text().optional(),
});

// Compile-time proof that the schema produces what the rest of navi consumes.
type Parsed = z.output<typeof ProfileSettingsSchema>;
const _schemaMatchesType: (p: Parsed) => ProfileSettings = (p) => p;
const _typeMatchesSchema: (p: ProfileSettings) => Parsed = (p) => p;
void _schemaMatchesType;
void _typeMatchesSchema;
