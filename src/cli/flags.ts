/**
 * Every command-line flag of navi, once (issue 18 item 8). This table drives the yargs builders
 * (`withFlags`), the fast path of `navi run` (fast-run.ts), the shorthand's list of options that
 * take a value (shorthand.ts), the completion script (completion-script.ts), which global flags
 * each command's help shows (`use`, help-layout.ts) and the configuration keys flags set
 * (`configKey`, agent-flags.ts `configFlags`); help text comes from `describe`.
 * `test/unit/cli-help.unit.test.ts` checks that every option yargs knows for a command is in this
 * table for it, and the other way round.
 */
import type { Argv, Options } from 'yargs';
import { SANDBOX_MODES } from '../sandbox/modes.js';
import { integerCoerce } from './flag-values.js';

/** A command as typed after `navi`: `run`, `sessions compact`. */
export type CommandPath =
  | 'run'
  | 'loop'
  | 'sessions list'
  | 'sessions compact'
  | 'runs list'
  | 'runs show'
  | 'profiles show'
  | 'queue add'
  | 'queue list'
  | 'worker'
  | 'serve';

/** How a flag's value is completed in the shell. */
export type Completion = 'files' | 'dirs' | 'profiles';

/** What a command uses beyond the flags every command has: its help shows the global flags of each. */
export type FlagUse = 'db' | 'ollama' | 'profile';

export interface Flag {
  /** As typed, without dashes: `max-iterations`. */
  name: string;
  /** Other spellings: long ones (`max-turns`) and one-letter ones (`m`). */
  aliases?: readonly string[];
  /** `integer`: a whole number checked as typed (flag-values.ts); `choice`: one of `choices`. */
  kind: 'string' | 'boolean' | 'integer' | 'choice';
  choices?: readonly string[];
  /** `global`: every command takes it (SPEC §3); else the commands that do. */
  commands: 'global' | readonly CommandPath[];
  describe: string;
  default?: string | number | boolean;
  /** Smallest value of an integer flag (default 1). */
  min?: number;
  /** The value must follow the flag (a bare `--record` is a usage error). */
  requiresArg?: boolean;
  complete?: Completion;
  /** Completion also offers `--no-NAME` (`--no-loop`, `--no-think`). */
  offerNegation?: boolean;
  /**
   * A global flag that only some commands' help shows: those that use a database (`db`), Ollama
   * (`ollama`) or a profile (`profile`); help-layout.ts. A global flag without one is on every page.
   */
  use?: FlagUse;
  /** The configuration key the flag sets for this invocation, above every file and variable (`llm.host`; agent-flags.ts `configFlags`). */
  configKey?: string;
}

const AGENT_COMMANDS: readonly CommandPath[] = ['run', 'loop'];

/**
 * `--sandbox MODE` (issue 22), one definition for every command that runs the model's commands:
 * a command joins by adding its path to `SANDBOX_COMMANDS` (the queue and serve commands do) and
 * passing `configFlags(args)` to the config loader, which sets `sandbox.mode` (its `configKey`).
 */
export const SANDBOX_COMMANDS: readonly CommandPath[] = ['run', 'loop', 'queue add', 'serve'];

export const SANDBOX_FLAG: Flag = {
  name: 'sandbox',
  kind: 'choice',
  choices: SANDBOX_MODES,
  requiresArg: true,
  commands: SANDBOX_COMMANDS,
  configKey: 'sandbox.mode',
  describe: "Run the shell tool's commands, user tools and a loop's checks in an OS sandbox (file tools obey its mode): workspace-write (write the tree and $TMPDIR only, no network), read-only, or off (else config sandbox, default off)",
};
const MODEL_COMMANDS: readonly CommandPath[] = ['run', 'loop', 'sessions compact'];
/** `navi queue add` passes these on to the job's `navi loop`. */
const LOOP_JOB: readonly CommandPath[] = ['loop', 'queue add'];

export const FLAGS: readonly Flag[] = [
  // Global flags (app.ts globalOptions; help-layout.ts shows each command the ones it uses).
  { name: 'cwd', kind: 'string', commands: 'global', complete: 'dirs', describe: 'Working directory (file tools are confined to it)' },
  { name: 'config', kind: 'string', commands: 'global', complete: 'files', describe: 'Config file (default ./.nav-config.json)' },
  {
    name: 'output',
    // --output-format: the spelling of claude -p and gemini -p, same values.
    aliases: ['o', 'output-format'],
    kind: 'choice',
    choices: ['text', 'json', 'stream-json'],
    default: 'text',
    commands: 'global',
    describe: 'Output format: text, json or stream-json (default text)',
  },
  { name: 'quiet', aliases: ['q'], kind: 'boolean', default: false, commands: 'global', describe: 'No progress or warnings on stderr' },
  { name: 'color', kind: 'boolean', default: true, commands: 'global', describe: 'Colour on a terminal (--no-color, or NO_COLOR)' },
  { name: 'db', kind: 'string', commands: 'global', use: 'db', configKey: 'db.url', describe: 'PostgreSQL URL (else DATABASE_URL, else embedded PGlite)' },
  {
    name: 'ollama-host',
    kind: 'string',
    commands: 'global',
    use: 'ollama',
    configKey: 'llm.host',
    describe: 'Ollama URL (else OLLAMA_HOST, else http://127.0.0.1:11434)',
  },
  {
    name: 'model',
    aliases: ['m'],
    kind: 'string',
    commands: 'global',
    use: 'ollama',
    configKey: 'llm.model',
    describe: 'Model name, one that can call tools (else llm.model, default qwen3:8b)',
  },
  {
    name: 'profile',
    aliases: ['p'],
    kind: 'string',
    commands: 'global',
    complete: 'profiles',
    use: 'profile',
    configKey: 'default_profile',
    describe: 'Profile id (else default_profile)',
  },

  // navi run
  { name: 'file', aliases: ['f'], kind: 'string', commands: ['run'], complete: 'files', describe: 'Read the prompt from a file' },
  {
    name: 'session',
    // -r/--resume: claude -p and gemini -p spell "continue this session" so.
    aliases: ['s', 'resume', 'r'],
    kind: 'string',
    commands: ['run'],
    describe: 'Continue an existing session (-r/--resume is an alias)',
  },
  { name: 'continue', aliases: ['c'], kind: 'boolean', commands: ['run'], describe: 'Continue the most recent session started in this directory' },
  {
    name: 'max-iterations',
    aliases: ['max-turns'],
    kind: 'integer',
    requiresArg: true,
    commands: ['run'],
    describe: "Cap tool-loop iterations (else the profile's max_iterations); --max-turns is an alias",
  },
  { name: 'loop', kind: 'boolean', offerNegation: true, commands: ['run'], describe: 'Enter loop mode on a trigger phrase or loop_mode.enabled (--no-loop: always one shot)' },
  {
    name: 'output-schema',
    kind: 'string',
    commands: ['run'],
    complete: 'files',
    describe: 'JSON Schema file: the final answer is asked for in that shape (Ollama format), checked, in result.structured; exit 1 if it does not match after one retry',
  },
  { name: 'output-last-message', kind: 'string', commands: ['run'], complete: 'files', describe: 'Also write the final answer to this file' },
  { name: 'allowed-tools', kind: 'string', commands: ['run'], describe: "Offer only these of the profile's tools (comma-separated)" },
  { name: 'disallowed-tools', kind: 'string', commands: ['run'], describe: "Do not offer these of the profile's tools (comma-separated)" },
  { name: 'timeout', kind: 'string', requiresArg: true, commands: ['run'], describe: 'Wall-clock limit of this run, e.g. 90s, 10m; exit 5 when reached (what was done is saved)' },
  { name: 'json', kind: 'boolean', commands: ['run', 'loop'], describe: "codex exec's --json: the same as -o stream-json (one JSON event per line)" },
  {
    name: 'print',
    kind: 'boolean',
    commands: ['run'],
    describe: "Accepted for claude's --print: navi always prints the answer and exits",
  },

  // run and loop: the system message and the model's settings for this invocation.
  {
    name: 'project-instructions',
    kind: 'boolean',
    default: true,
    commands: AGENT_COMMANDS,
    describe: 'Read AGENTS.md (else CLAUDE.md, GEMINI.md) from the repository root down to here into the system message (--no-project-instructions: do not)',
  },
  { name: 'append-system-prompt', kind: 'string', commands: AGENT_COMMANDS, describe: 'Text appended to the system message for this run' },
  { name: 'system-prompt', kind: 'string', commands: AGENT_COMMANDS, describe: "Text that replaces the profile's system prompt for this run (the persona and project instructions stay)" },
  { name: 'mcp-config', kind: 'string', commands: AGENT_COMMANDS, complete: 'files', describe: 'A JSON file with "mcpServers" (as .mcp.json): its servers are added for this run' },
  { name: 'add-dir', kind: 'string', commands: AGENT_COMMANDS, complete: 'dirs', describe: 'Accepted for a directory inside --cwd (the file tools reach all of it); one outside is exit 2' },
  { name: 'verbose', kind: 'boolean', commands: AGENT_COMMANDS, describe: 'Progress and warnings on stderr (the default; the opposite of --quiet)' },
  { name: 'think', kind: 'string', offerNegation: true, commands: AGENT_COMMANDS, configKey: 'llm.think', describe: 'Extended reasoning: low, medium or high (--no-think: off); sets llm.think for this run' },
  { name: 'temperature', kind: 'string', requiresArg: true, commands: AGENT_COMMANDS, configKey: 'llm.temperature', describe: 'Sampling temperature 0-2 for this run (sets llm.temperature)' },
  { name: 'num-ctx', kind: 'integer', requiresArg: true, commands: AGENT_COMMANDS, configKey: 'llm.num_ctx', describe: 'Context window in tokens for this run (sets llm.num_ctx)' },
  SANDBOX_FLAG,

  // navi loop
  {
    name: 'max-iterations',
    aliases: ['max-turns'],
    kind: 'integer',
    requiresArg: true,
    commands: LOOP_JOB,
    describe: 'Loop iterations before stopping (1-20; else loop_mode.max_iterations, 5); --max-turns is an alias',
  },
  { name: 'approval', kind: 'choice', choices: ['none', 'strict', 'periodic'], commands: LOOP_JOB, describe: 'Ask to accept iterations: none, strict (every one) or periodic (every periodic_interval)' },
  { name: 'never-pause', kind: 'boolean', commands: LOOP_JOB, describe: 'On stagnation, auto-diversify instead of stopping (needs --max-iterations)' },
  { name: 'strategy', kind: 'choice', choices: ['combine', 'radical', 'reread'], commands: LOOP_JOB, describe: 'Diversification strategy on stagnation: combine, radical or reread' },
  { name: 'decisions', kind: 'string', commands: LOOP_JOB, complete: 'files', describe: 'Answers for approval/stagnation/max-iterations prompts: JSON lines file, or - for stdin' },
  { name: 'resume', kind: 'string', commands: ['loop'], describe: 'Continue a stopped run (interrupted, incomplete, out of budget, aborted) by id' },
  { name: 'extend', kind: 'integer', requiresArg: true, commands: ['loop'], describe: 'With --resume: add N iterations to the run' },
  { name: 'clarify', kind: 'string', requiresArg: true, commands: ['loop'], describe: 'With --resume: a clarification for the model, given with the next iteration' },
  { name: 'max-tokens', kind: 'integer', requiresArg: true, commands: LOOP_JOB, describe: 'Token budget of the whole run (prompt + completion); exit 5 when spent' },
  { name: 'deadline', kind: 'string', commands: LOOP_JOB, describe: 'Wall-clock limit of the whole run, e.g. 30m, 8h; exit 5 when reached' },
  { name: 'iteration-timeout', kind: 'string', commands: LOOP_JOB, describe: "Longest one iteration's agent turn may take (default 30m); exit 5" },
  {
    name: 'notify',
    kind: 'string',
    requiresArg: true,
    commands: ['loop', 'serve'],
    describe: 'POST to URL when the loop waits on you, fails or ends (repeatable; Slack/Discord webhooks get their shape; ${VAR} read when sending)',
  },

  // CI: record/replay of the model's exchanges (model-exchanges.ts) and the loop's reports.
  { name: 'record', kind: 'string', requiresArg: true, commands: MODEL_COMMANDS, complete: 'files', describe: 'Write every model exchange of this run to FILE (JSONL, secrets redacted; docs/recording-format.md)' },
  {
    name: 'replay',
    kind: 'string',
    requiresArg: true,
    commands: MODEL_COMMANDS,
    complete: 'files',
    describe: 'Answer every model request from a recording made with --record, without Ollama; exit 2 on the first request that differs',
  },
  { name: 'replay-timing', kind: 'boolean', commands: MODEL_COMMANDS, describe: 'With --replay: stream the answers with their recorded timing (default: at once)' },
  { name: 'junit', kind: 'string', requiresArg: true, commands: ['loop'], complete: 'files', describe: 'Write a JUnit XML report of the run to FILE (a case per check per iteration, and the exit gate)' },
  { name: 'summary', kind: 'string', requiresArg: true, commands: ['loop'], complete: 'files', describe: 'Write a Markdown summary of the run to FILE (also appended to $GITHUB_STEP_SUMMARY when set)' },

  // navi serve (src/serve/).
  {
    name: 'host',
    kind: 'string',
    requiresArg: true,
    default: '127.0.0.1',
    commands: ['serve'],
    describe: 'Address to listen on (default 127.0.0.1; another is reachable from other machines over plain HTTP)',
  },
  { name: 'port', kind: 'integer', requiresArg: true, default: 7777, min: 0, commands: ['serve'], describe: 'Port to listen on (default 7777; 0 picks a free one)' },
  {
    name: 'token',
    kind: 'string',
    requiresArg: true,
    commands: ['serve'],
    describe: 'Bearer token every API request and WebSocket must carry (else NAVI_SERVE_TOKEN, else one navi keeps in its data directory; a flag shows in ps); never printed',
  },
  {
    name: 'allowed-host',
    kind: 'string',
    requiresArg: true,
    commands: ['serve'],
    describe: 'Also answer requests whose Host is NAME (repeatable; .example.com: it and its subdomains; *: any); else only loopback names and the address listened on (403)',
  },

  // The listing and showing commands.
  { name: 'limit', kind: 'integer', requiresArg: true, default: 20, commands: ['runs list', 'sessions list', 'queue list'], describe: 'How many (default 20)' },
  {
    name: 'format',
    kind: 'choice',
    choices: ['md', 'junit', 'json'],
    commands: ['runs show'],
    describe: 'Render as a Markdown summary, a JUnit XML report or JSON (what navi loop --summary/--junit write)',
  },

  // navi queue add / navi worker (issue 21)
  { name: 'repo', kind: 'string', requiresArg: true, commands: ['queue add'], complete: 'dirs', describe: 'The git repository the job works in: a directory the workers can reach, or a git URL each worker clones (default: the one here)' },
  { name: 'branch', kind: 'string', requiresArg: true, commands: ['queue add'], describe: "The branch (or commit) the job's worktree starts from (default: the repository's HEAD)" },
  { name: 'cron', kind: 'string', requiresArg: true, commands: ['queue add'], describe: 'A schedule instead of one job: a cron expression in UTC, e.g. "0 2 * * *" (02:00 every night)' },
  { name: 'priority', kind: 'integer', requiresArg: true, min: 0, commands: ['queue add'], describe: 'Higher runs first (default 0)' },
  { name: 'concurrency', kind: 'integer', requiresArg: true, default: 1, commands: ['worker'], describe: 'Jobs run at once by this worker (default 1)' },
  { name: 'cache-dir', kind: 'string', requiresArg: true, commands: ['worker'], complete: 'dirs', describe: 'Where the worker keeps clones, job worktrees and logs (default ~/.cache/navi/worker)' },
  {
    // The worker's own entry (issue 35): the same values as SANDBOX_FLAG, read as a floor.
    name: 'sandbox',
    kind: 'choice',
    choices: SANDBOX_MODES,
    requiresArg: true,
    commands: ['worker'],
    describe: "The least sandbox of every job's commands; no job flag, task file or repository config lowers it: workspace-write (the default; the worker refuses to start where none can be set up), read-only, or off",
  },
  {
    name: 'trust-repo-config',
    kind: 'boolean',
    commands: ['worker'],
    describe: "Let jobs use their repository's .nav-config.json, .mcp.json, profiles/ and tools/ (default: only the ones in config worker.trusted_repos; others run with this worker's config)",
  },
  { name: 'project-instructions', kind: 'boolean', default: true, commands: ['profiles show'], describe: 'Include AGENTS.md & co. (--no-project-instructions: as a run with it)' },
];

/** The flags of `command` (its own, not the global ones), in table order. */
export function flagsOf(command: CommandPath): Flag[] {
  return FLAGS.filter((f) => f.commands !== 'global' && f.commands.includes(command));
}

/** The flags every command takes. */
export function globalFlags(): Flag[] {
  return FLAGS.filter((f) => f.commands === 'global');
}

/** The flags that set a configuration key, in table order. */
export function configKeyFlags(): Array<Flag & { configKey: string }> {
  return FLAGS.filter((f): f is Flag & { configKey: string } => f.configKey !== undefined);
}

/** Every spelling of a flag as typed: `--max-iterations`, `--max-turns`, `-m`. */
export function spellings(flag: Flag): string[] {
  return [flag.name, ...(flag.aliases ?? [])].map(dashed);
}

/** `--name`, or `-n` for one letter. */
export function dashed(name: string): string {
  return name.length === 1 ? `-${name}` : `--${name}`;
}

/** `max-iterations` → `maxIterations` (how yargs and the fast path hand it to commands). */
export function camelCase(name: string): string {
  return name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** Every spelling of every flag that takes a value (any command): the word after it is not a positional. */
export function valueFlagSpellings(): Set<string> {
  return new Set(FLAGS.filter((f) => f.kind !== 'boolean').flatMap(spellings));
}

/** The yargs definition of one flag. */
export function yargsOption(flag: Flag): Options {
  const base: Options = { describe: flag.describe };
  const aliases = flag.aliases ?? [];
  if (aliases.length > 0) base.alias = [...aliases];
  if (flag.default !== undefined) base.default = flag.default;
  if (flag.requiresArg === true) base.requiresArg = true;
  switch (flag.kind) {
    case 'boolean':
      return { ...base, type: 'boolean' };
    case 'string':
      return { ...base, type: 'string' };
    case 'choice':
      return { ...base, choices: [...(flag.choices ?? [])] };
    case 'integer':
      // No yargs type: the text arrives whole and is checked as typed (flag-values.ts).
      return { ...base, requiresArg: true, coerce: integerCoerce(flag.name, flag.min ?? 1) };
  }
}

/** Adds `flags` to a yargs builder. */
export function withFlags<T>(y: Argv<T>, flags: readonly Flag[]): Argv<T> {
  let out = y;
  for (const flag of flags) out = out.option(flag.name, yargsOption(flag));
  return out;
}

/** A command's own flags on its yargs builder. */
export function commandFlags<T>(y: Argv<T>, command: CommandPath): Argv<T> {
  return withFlags(y, flagsOf(command));
}
