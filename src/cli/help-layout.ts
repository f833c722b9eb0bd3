/**
 * How each command's `--help` reads: its own options first, then only the global flags that
 * apply to it (a `tasks list` has no use for `--ollama-host`), examples as whole command lines
 * (yargs' example column breaks a long command in two at 80 columns), and the width of the
 * terminal, or 80 when output is not one. Each command's builder also records which command
 * this is and the flags it knows, so a usage error can name the right `--help` and suggest
 * the flag meant (usage-error.ts).
 */
import type { Argv } from 'yargs';
import { globalFlags, type FlagUse } from './flags.js';

export type { FlagUse };

/** Every global flag (SPEC §3), as yargs names them, in table order: for telling them from a command's own. */
export const GLOBAL_FLAGS: readonly string[] = globalFlags().map((f) => f.name);

/** The global flags a command's help shows: those without a `use` (cwd, config, output, quiet, color) and those of its uses. */
function usedGlobalFlags(uses: readonly FlagUse[]): Set<string> {
  return new Set(globalFlags().filter((f) => f.use === undefined || uses.includes(f.use)).map((f) => f.name));
}

/** The widest help yargs lays out: beyond it, lines get hard to read. */
const MAX_HELP_WIDTH = 100;
/** Width when stdout is not a terminal and COLUMNS is unset: what man and git assume. */
const DEFAULT_HELP_WIDTH = 80;

/** The width help is wrapped to: the terminal's, else COLUMNS, else 80; at most 100. */
export function helpWidth(columns: number | undefined, env: Record<string, string | undefined>): number {
  const fromEnv = Number.parseInt(env.COLUMNS ?? '', 10);
  const width = columns !== undefined && columns > 0 ? columns : Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : DEFAULT_HELP_WIDTH;
  return Math.min(MAX_HELP_WIDTH, width);
}

/**
 * Help without yargs' right-aligned type column (`[string]`, `[choices: …]`): it collides with a
 * description that fills its line ("stderr[boolean]") and doubles the lines at 80 columns.
 * Choices and defaults are said in the descriptions instead.
 */
export function hideTypes<T>(y: Argv<T>): Argv<T> {
  // usageConfiguration() exists at runtime (yargs 18) but not in the typings.
  return (y as unknown as { usageConfiguration(c: Record<string, boolean>): Argv<T> }).usageConfiguration({ 'hide-types': true });
}

/** One example: a command line and what it does. */
export type Example = readonly [command: string, does: string];

/** Examples as a block of whole lines: the command, then what it does, indented below it. */
export function examplesText(examples: readonly Example[]): string {
  return ['Examples:', ...examples.flatMap(([cmd, does]) => (does === '' ? [`  ${cmd}`] : [`  ${cmd}`, `      ${does}`]))].join('\n');
}

/** The command being parsed, as its builder described it (null: the top level). */
export interface CommandContext {
  /** `runs show`. */
  path: string;
  /** Every flag it accepts, with aliases, as typed (`max-iterations`, `s`). */
  flags: string[];
}

/**
 * The command each parse is in, by its yargs instance (a command's builder gets the instance the
 * parse started with): one process may parse many times, even at once, as tests do.
 */
const current = new WeakMap<object, CommandContext>();

/** The command whose builder ran last in the parse of `y`: the one a usage error is about (null: the top level). */
export function currentCommand(y: object): CommandContext | null {
  return current.get(y) ?? null;
}

export interface CommandHelp {
  /** The command as typed after `navi`: `runs show`. */
  path: string;
  uses: readonly FlagUse[];
  examples: readonly Example[];
  /** Text after the examples (exit codes). */
  epilog?: string;
}

/**
 * Lays out the help of one command (call last in its builder): hides the global flags it does
 * not use, groups its own options before the global ones, adds the examples, and records the
 * command for usage errors.
 */
export function commandHelp<T>(y: Argv<T>, help: CommandHelp): Argv<T> {
  const used = usedGlobalFlags(help.uses);
  // getOptions() and getGroups() are public at runtime but missing from the typings.
  const api = y as unknown as { getOptions(): { key: Record<string, unknown>; alias: Record<string, string[]> }; getGroups(): Record<string, string[]> };
  const options = api.getOptions();
  const positionals = new Set(api.getGroups()['Positionals:'] ?? []);
  const aliasesOf = (k: string): string[] => options.alias[k] ?? [];
  const notOwn = new Set([...GLOBAL_FLAGS, 'help', 'version'].flatMap((k) => [k, ...aliasesOf(k)]));
  const keys = Object.keys(options.key).filter((k) => !/[A-Z.]/.test(k));
  const own = keys.filter((k) => !notOwn.has(k) && !positionals.has(k) && !isAliasOnly(k, options.alias));
  let out = y;
  for (const flag of GLOBAL_FLAGS) if (!used.has(flag)) out = out.hide(flag);
  out = out.hide('version');
  if (own.length > 0) out = out.group(own, 'Options:');
  out = out.group([...GLOBAL_FLAGS.filter((f) => used.has(f)), 'help'], 'Global options:');
  out = out.epilog([examplesText(help.examples), help.epilog].filter((s) => s !== undefined && s !== '').join('\n\n'));
  const flags = [...own, 'help', ...GLOBAL_FLAGS.filter((f) => used.has(f))];
  current.set(y, { path: help.path, flags: [...new Set(flags.flatMap((k) => [k, ...aliasesOf(k)]))].filter((f) => !/[A-Z]/.test(f)) });
  return out;
}

/** True when `key` appears only as another key's alias (yargs lists both directions). */
function isAliasOnly(key: string, aliases: Record<string, string[]>): boolean {
  return Object.entries(aliases).some(([k, list]) => k !== key && list.includes(key) && k.length > key.length);
}
