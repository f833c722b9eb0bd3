/**
 * The configuration schema (SPEC §5): snake_case keys as in the seeds, every default here.
 * Nested blocks are strict (a misspelt key inside `loop_mode` is an error naming it); unknown
 * top-level keys are stripped here and reported as warnings by the loader, because navigator's
 * `.nav-config.json` carries many keys that mean nothing to navi.
 */

import { z } from 'zod';
import { DEFAULT_MODEL, DEFAULT_OLLAMA_HOST, DEFAULT_PROFILE_ID, DEFAULT_SHELL_DENY } from './defaults.js';
import { DURATION_HINT, durationProblem } from './duration.js';
import { THINK_LEVELS } from '../think.js';
import { outageRetryProblem } from './outage-retry.js';
import { bool, intAtLeast, intBetween, numberBetween, oneOf, positiveNumber, text, textList } from './fields.js';
import { normalizeOllamaHost } from './host.js';
import { KEEP_ALIVE_HINT, keepAliveProblem, keepAliveWire } from './keep-alive.js';
import { McpSchema } from './mcp-schema.js';
import { DEFAULT_SANDBOX_MODE, SANDBOX_ENV_INHERIT, SANDBOX_MODES } from '../sandbox/modes.js';
import { NotifyListSchema } from './notify-schema.js';

/** Approval prompts between loop iterations (seed 004). */
export const ITERATION_APPROVALS = ['none', 'strict', 'periodic'] as const;

/** Recovery instruction used when never_pause_on_stagnation fires (seed 004). */
export const DIVERSIFY_STRATEGIES = ['combine', 'radical', 'reread'] as const;

/** Profile ids are directory names under `profiles/`. */
export const PROFILE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** The loop_mode block, exactly seed 004's keys, defaults and ranges. */
export const LoopModeSchema = z.strictObject({
  /** Run `navi run` in loop mode by default. */
  enabled: bool().default(false),
  /** Hard cap on loop iterations (1–20). */
  max_iterations: intBetween(1, 20).default(5),
  /** Equal consecutive state hashes that count as stagnation (2–5). */
  stagnation_threshold: intBetween(2, 5).default(3),
  /** The exit gate needs the model's exit signal alongside ≥2 met indicators. */
  exit_requires_explicit_signal: bool().default(true),
  /** Print the NAVIGATOR_STATUS block each iteration (always emitted as an event). */
  show_status_block: bool().default(true),
  /** When to ask for approval between iterations. */
  iteration_approval: oneOf(ITERATION_APPROVALS).default('none'),
  /** With `periodic` approval: ask every N iterations. */
  periodic_interval: intAtLeast(1).default(3),
  /** Headless stagnation auto-diversifies instead of aborting; needs an explicit max_iterations. */
  never_pause_on_stagnation: bool().default(false),
  /** Which diversification instruction to send on stagnation. */
  stagnation_diversify_strategy: oneOf(DIVERSIFY_STRATEGIES).default('combine'),
});

const THINK_HINT = `must be true, false, or one of ${THINK_LEVELS.map((l) => JSON.stringify(l)).join(', ')}`;

/** `llm.think`: a boolean or an effort level. */
function thinkField() {
  return z.union([z.boolean(), z.enum(THINK_LEVELS)], { error: THINK_HINT });
}

const hostField = z.string({ error: 'must be an Ollama URL such as http://127.0.0.1:11434' }).transform((value, ctx) => {
  const host = normalizeOllamaHost(value);
  if (host === undefined) {
    ctx.issues.push({ code: 'custom', input: value, message: 'must be an Ollama URL such as http://127.0.0.1:11434 or host:port' });
    return z.NEVER;
  }
  return host;
});

/** The llm block: where Ollama is and how to call it. */
export const LlmSchema = z.strictObject({
  /** Ollama base URL; bare `host:port` is normalised to `http://host:port`. */
  host: hostField.default(DEFAULT_OLLAMA_HOST),
  /** Model name as Ollama knows it (a profile's `model` overrides it). */
  model: text().default(DEFAULT_MODEL),
  /** Context window sent with every request; Ollama's own default silently truncates. */
  num_ctx: intAtLeast(1).default(65536),
  /**
   * Request extended reasoning: true, false, or an effort level "low" | "medium" | "high"
   * (Ollama's ThinkValue, api/types.go 1126-1229; gpt-oss ignores true/false and needs a level).
   * A profile's `think_enabled: false` turns it off.
   */
  think: thinkField().default(true),
  /**
   * How long Ollama keeps the model loaded between requests; long so an overnight loop never
   * reloads it. Seconds or a Go duration, loaded as the value the request carries (a bare
   * integer string becomes a number): see keep-alive.ts.
   */
  keep_alive: z
    .union([z.number(), z.string()], { error: KEEP_ALIVE_HINT })
    .superRefine((value, ctx) => {
      const problem = keepAliveProblem(value);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    })
    .transform(keepAliveWire)
    .default('30m'),
  /** Sampling temperature; unset leaves the model's own default. */
  temperature: numberBetween(0, 2).optional(),
  /**
   * Seconds of silence before the first streamed chunk (model load, prefill, a first tool call
   * being written). Set explicitly, it fails the call; left at its default, navi checks that
   * Ollama still answers and keeps waiting while it does (SPEC §13).
   */
  first_chunk_timeout_s: positiveNumber('seconds').default(90),
  /** Seconds of silence between two streamed chunks; explicit: enforced, default: a liveness check. */
  chunk_timeout_s: positiveNumber('seconds').default(60),
  /** Longest one model call may take, start to finish (0: no limit); bounds a server that answers but never finishes. */
  call_timeout_s: numberBetween(0, 31_536_000).default(3600),
  /**
   * How long a model call waits out a transient outage (busy, restarting, runner reloading)
   * before exit 75; "0": not at all. Unset: 5m in loop mode, 0 for a one-shot (outage-retry.ts).
   */
  outage_retry: z
    .union([z.string(), z.number()], { error: 'must be a duration such as 90s, 5m or 1h, or 0 for none' })
    .superRefine((value, ctx) => {
      const problem = outageRetryProblem(value);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    })
    .optional(),
});

/** The db block. Neither set → embedded PGlite in the default data directory. */
export const DbSchema = z.strictObject({
  /** PostgreSQL server URL (`postgres://` or `postgresql://`); set → postgres.js instead of PGlite. */
  url: z
    .string({ error: 'must be a postgres:// or postgresql:// URL' })
    .regex(/^postgres(?:ql)?:\/\/\S*$/, { error: 'must be a postgres:// or postgresql:// URL' })
    .optional(),
  /** PGlite data directory (absolute after loading; relative paths are resolved against the file that set them). */
  data_dir: text().optional(),
});

/** The shell tool's policy (SPEC §10). */
export const ShellPolicySchema = z.strictObject({
  /** Glob patterns a command must match when non-empty. */
  allow: textList().default(() => []),
  /** Glob patterns refused even when allowed; a config's list replaces the default one. */
  deny: textList().default(() => [...DEFAULT_SHELL_DENY]),
  /** Default timeout of one command, seconds. */
  timeout_s: positiveNumber('seconds').default(120),
  /** Output kept per command (head and tail), bytes. */
  max_output_bytes: intAtLeast(1).default(65536),
});

/** The tools block. */
export const ToolsSchema = z.strictObject({
  shell: ShellPolicySchema.prefault({}),
  /** Extra directories of user tool modules (besides `./tools/`), resolved like data_dir. */
  paths: textList().optional(),
});

/** The sandbox block (issue 22): where the shell tool's commands run. */
export const SandboxSchema = z.strictObject(
  {
  /** off | workspace-write | read-only (sandbox/modes.ts says why off is the default). */
  mode: oneOf(SANDBOX_MODES).default(DEFAULT_SANDBOX_MODE),
  /** Sandboxed commands may reach the network (package installs). */
  network: bool().default(false),
  },
  { error: 'must be a mode ("off", "workspace-write", "read-only") or { "mode": …, "network": true|false }' },
);

/** A variable name or a glob of names (`AWS_*`): letters, digits, `_`, `*`, `?`. */
const envNameGlob = z
  .string({ error: 'must be a variable name or a glob such as "AWS_*"' })
  .regex(/^[A-Za-z0-9_*?]+$/, { error: 'must be a variable name or a glob such as "AWS_*" (letters, digits, "_", "*", "?")' });

/**
 * `sandbox.env`: which of navi's environment variables sandboxed commands get (sandbox/env-filter.ts).
 * Config only: a task file (which a worker takes from a job's repository) cannot widen it.
 */
export const SandboxEnvSchema = z.strictObject(
  {
    /** `all`: navi's environment less the secrets; `none`: only `include`. */
    inherit: oneOf(SANDBOX_ENV_INHERIT).default('all'),
    /** Names passed even when the default rule drops them (`GITHUB_TOKEN` for `gh`). */
    include: z.array(envNameGlob, { error: 'must be an array of variable names or globs' }).default(() => []),
    /** Names never passed. */
    exclude: z.array(envNameGlob, { error: 'must be an array of variable names or globs' }).default(() => []),
  },
  { error: 'must be { "inherit": "all" | "none", "include": [names], "exclude": [names] }' },
);

/** The config's sandbox block: a task's, plus `env`. */
export const ConfigSandboxSchema = z.strictObject(
  {
    mode: oneOf(SANDBOX_MODES).default(DEFAULT_SANDBOX_MODE),
    network: bool().default(false),
    /** The environment inside (secrets and socket pointers left out by default). */
    env: SandboxEnvSchema.prefault({}),
  },
  { error: 'must be a mode ("off", "workspace-write", "read-only") or { "mode": …, "network": true|false, "env": {…} }' },
);

/** `sandbox: "workspace-write"` is short for `sandbox: { mode: "workspace-write" }` (config and task files). */
export function expandSandboxShorthand(value: unknown): unknown {
  return typeof value === 'string' ? { mode: value } : value;
}

/** `sandbox` as written in a task file: a mode, or the block. */
export const SandboxFieldSchema = z.preprocess(expandSandboxShorthand, SandboxSchema);

/** `sandbox` as written in a config file: a mode, or the block with `env`. */
export const ConfigSandboxFieldSchema = z.preprocess(expandSandboxShorthand, ConfigSandboxSchema);

/**
 * The worker block (`navi worker`, issue 35). `trusted_repos`: the repositories whose own config
 * (`.nav-config.json`, `.mcp.json`, `profiles/`, `tools/`) a job's loop may use, each as
 * `navi queue add --repo` stored it: a git URL, or a local repository's absolute path. Any
 * other repository's jobs run with the operator's config only.
 */
export const WorkerSchema = z.strictObject({
  trusted_repos: z
    .array(
      text().refine((r) => /^[a-z][a-z0-9+.-]*:\/\//i.test(r) || /^[\w.-]+@[\w.-]+:/.test(r) || r.startsWith('/'), {
        error: 'must be a git URL (https://…, ssh://…, git@host:…, file:///…) or an absolute path',
      }),
      { error: 'must be a list of repositories (git URLs or absolute paths)' },
    )
    .default(() => []),
});

/** The budget block: limits that end a loop with `budget_exhausted` (exit 5). */
export const BudgetSchema = z.strictObject({
  /** Prompt + completion tokens a run may spend. */
  max_tokens: intAtLeast(1).optional(),
  /** Wall-clock limit of a run, e.g. "8h", "30m", "90s" (see parseDuration). */
  deadline: z
    .string({ error: `must be ${DURATION_HINT}` })
    .superRefine((s, ctx) => {
      const problem = durationProblem(s);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    })
    .optional(),
});

/** The whole configuration file; every key optional, unknown top-level keys stripped. */
export const NaviConfigSchema = z.object({
  /** Loop mode settings (seed 004). */
  loop_mode: LoopModeSchema.prefault({}),
  /** Ollama connection and request options. */
  llm: LlmSchema.prefault({}),
  /** Storage. */
  db: DbSchema.prefault({}),
  /** Profile used when `--profile` is not given. */
  default_profile: z
    .string({ error: 'must be a profile id' })
    .regex(PROFILE_ID_PATTERN, { error: 'must be a profile id (letters, digits, ".", "_" or "-")' })
    .default(DEFAULT_PROFILE_ID),
  /** Tool policies. */
  tools: ToolsSchema.prefault({}),
  /** Run limits. */
  budget: BudgetSchema.prefault({}),
  /** Per-message token cap in the model's view; 0 = auto (num_ctx / 6). */
  context_message_token_budget: intAtLeast(0).default(0),
  /** MCP servers whose tools the model may call (also read from `.mcp.json`). */
  mcp: McpSchema.prefault({}),
  /** Sandbox of the shell tool's commands: a mode or `{ mode, network, env }`. */
  sandbox: ConfigSandboxFieldSchema.prefault({}),
  /** What `navi worker` trusts (issue 35). */
  worker: WorkerSchema.prefault({}),
  /** Where a loop POSTs when it waits on a person, fails or ends (src/notify/). */
  notify: NotifyListSchema.default(() => []),
  /**
   * The `navi serve` address notifications link to (`http://host:7777`): a CLI loop's
   * notification then carries `<base>/#/runs/<run id>`. Unset: no link (a loop the server
   * started links to its page by itself).
   */
  notify_link_base: z
    .string({ error: 'must be an http:// or https:// URL such as http://127.0.0.1:7777' })
    .regex(/^https?:\/\/[^\s/?#]+\/?$/, { error: 'must be an http:// or https:// URL such as http://127.0.0.1:7777 (scheme, host and port only)' })
    .optional(),
});

/** The validated configuration, every default filled in. */
export type NaviConfig = z.output<typeof NaviConfigSchema>;
/** `loop_mode` after defaults. */
export type LoopModeConfig = NaviConfig['loop_mode'];
/** `llm` after defaults. */
export type LlmConfig = NaviConfig['llm'];
/** Diversification strategy. */
export type DiversifyStrategy = LoopModeConfig['stagnation_diversify_strategy'];

/** The top-level keys navi understands; any other is warned about and ignored. */
export const CONFIG_KEYS: readonly string[] = Object.freeze(Object.keys(NaviConfigSchema.shape));

/** A fresh configuration with every default (what no file, env or flag gives). */
export function defaultConfig(): NaviConfig {
  return NaviConfigSchema.parse({});
}
