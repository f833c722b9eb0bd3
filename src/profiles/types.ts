/**
 * A profile: `profiles/<id>/config.json` (validated, snake_case keys as in seed 000) plus
 * `profiles/<id>/system_prompt.txt`. The persona (`profiles/persona.txt`) is prepended to every
 * profile's prompt as persona + "\n---\n" + prompt.
 */

export interface ProfileSettings {
  /** One line shown by `navi profiles list`. */
  description: string;
  /** Overrides the configured model for this profile. */
  model?: string;
  /** Overrides the configured sampling temperature (0–2). */
  temperature?: number;
  /** Send `think: true` on main-loop calls (default true). */
  think_enabled: boolean;
  /** The `plan` tool is offered (default true). */
  planning_enabled: boolean;
  /** Tell the model how many tool-loop iterations remain (default true). */
  iteration_budget_enabled: boolean;
  /** Re-state the goal every `goal_anchoring_interval` iterations (default true). */
  goal_anchoring_enabled: boolean;
  /** N for goal anchoring (default 5). */
  goal_anchoring_interval: number;
  /** Warn the model when it loops without todo progress (default true). */
  anti_stall_enabled: boolean;
  /** Iterations without progress before that warning (default 8). */
  anti_stall_threshold: number;
  /** A todo step cannot be marked done without a `validation` field (default false). */
  step_validation_enabled: boolean;
  /** Sub-agents of this profile run the planning pipeline automatically before their tool loop (default false). */
  subagent_planning_enabled: boolean;
  /** Post-turn worker: extract lasting facts about the user into long-term memory. */
  memory_extraction_enabled: boolean;
  /** Offer the project's user tools (./tools/, tools.paths) beside the listed tools. */
  user_tools_enabled: boolean;
  /** Tool-loop iterations per turn. */
  max_iterations: number;
  tools: {
    /** Tools of the main agent. */
    agent: string[];
    /** Tools of a sub-agent running this profile; empty → falls back to `agent`. */
    subagent: string[];
    /** MCP tools: server names, `server/tool` or `*`; absent → every configured server's tools. */
    mcp?: string[] | undefined;
  };
  /** System prompt used instead of system_prompt.txt when this profile runs as a sub-agent. */
  subagent_system_prompt?: string;
  /** Messages kept verbatim by compression (overrides the default). */
  compression_keep_recent?: number;
  /** Token budget of the compression summary (overrides the default). */
  compression_max_tokens?: number;
  /** Summarisation prompt file, relative to the profile directory. */
  compression_prompt_file?: string;
}

export interface Profile {
  /** Directory name under `profiles/`. */
  id: string;
  /** Directory the profile was loaded from (shipped or the project's `profiles/`). */
  dir: string;
  /** `shipped` or `project` (a `profiles/` folder in the working directory). */
  source: 'shipped' | 'project';
  settings: ProfileSettings;
  /** Contents of system_prompt.txt (without the persona). */
  prompt: string;
}

export interface ProfileSet {
  /** Contents of persona.txt, prepended to every profile's prompt. */
  persona: string;
  /** File the persona was read from (shipped `profiles/persona.txt` or the project's override). */
  personaFile?: string;
  /** Profiles by id: shipped ones, then the project's (same id replaces). */
  profiles: Map<string, Profile>;
  /**
   * The project's profiles that failed to load, by id, with why (exit 2 when one is used; listed
   * by `navi profiles list`). A broken profile that nobody asks for blocks nothing.
   */
  broken?: Map<string, string>;
}
