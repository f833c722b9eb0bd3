/**
 * The flags of `navi run` / `navi loop` that people bring from claude -p, codex exec and
 * gemini -p where navi has the feature (issue 18 item 21): `--json`, `--verbose`,
 * `--system-prompt`, `--mcp-config`, `--add-dir`, `--think`/`--no-think`, `--temperature`,
 * `--num-ctx`, `--timeout`. Each problem is exit 2 naming the flag.
 */
import { THINK_LEVELS, type ThinkValue } from '../think.js';
import { statSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { parseDuration } from '../config/duration.js';
import type { ConfigFlag, ConfigFlags } from '../config/load.js';
import { InvalidInputError, printable } from '../errors.js';
import { camelCase, configKeyFlags } from './flags.js';
import type { GlobalArgs } from './global-args.js';

/** These flags as yargs (or the fast path) gives them: a flag given twice arrives as an array. */
export interface AgentFlagArgs {
  json?: boolean;
  verbose?: boolean;
  systemPrompt?: unknown;
  mcpConfig?: unknown;
  addDir?: unknown;
  think?: unknown;
  temperature?: unknown;
  numCtx?: number;
  timeout?: unknown;
  sandbox?: unknown;
}

/** A repeatable flag's values (yargs gives one string, or an array when repeated). */
export function listFlag(raw: unknown): string[] {
  const values: unknown[] = Array.isArray(raw) ? raw : [raw];
  return values.filter((v): v is string | number => typeof v === 'string' || typeof v === 'number').map((v) => String(v));
}

/** The last value of a flag that takes one (given twice, the last wins as in yargs' own). */
function lastValue(raw: unknown): string | number | boolean | undefined {
  const value: unknown = Array.isArray(raw) ? (raw as unknown[])[raw.length - 1] : raw;
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? value : undefined;
}

/**
 * `--think [LEVEL]` / `--no-think` as the config's `llm.think`: true, false, or the effort level
 * ("low" | "medium" | "high"), which requests send as it is (gpt-oss needs a level).
 */
export function thinkFlag(raw: unknown): ThinkValue | undefined {
  const value = lastValue(raw);
  if (value === undefined) return undefined;
  if (typeof value === 'boolean') return value;
  const text = String(value).trim().toLowerCase();
  if (text === '' || text === 'true') return true;
  if (text === 'false') return false;
  if ((THINK_LEVELS as readonly string[]).includes(text)) return text as ThinkValue;
  throw new InvalidInputError('flag_invalid', `--think takes ${THINK_LEVELS.join(', ')} (or --no-think for none); got '${printable(String(value))}'`);
}

/** `--temperature T`: a number as typed; anything else goes on as text so the config names the allowed range. */
export function temperatureFlag(raw: unknown): number | string | undefined {
  const value = lastValue(raw);
  if (value === undefined) return undefined;
  const text = String(value).trim();
  return /^[+-]?(?:\d+\.?\d*|\.\d+)$/.test(text) ? Number(text) : text;
}

/** How a flag's value reaches its configuration key where yargs' value is not it (else as given). */
const CONFIG_VALUE: Readonly<Record<string, (raw: unknown) => unknown>> = {
  think: thinkFlag,
  temperature: temperatureFlag,
  // The last one when repeated; an unknown mode goes on for the configuration to name.
  sandbox: (raw) => {
    const value = lastValue(raw);
    return value === undefined ? undefined : String(value);
  },
};

/** The flags that set configuration keys (the table's `configKey`), for loadConfig: flags are the highest layer. */
export function configFlags(args: GlobalArgs & AgentFlagArgs): ConfigFlags {
  const given = args as GlobalArgs & Record<string, unknown>;
  const flags: ConfigFlag[] = [];
  for (const { name, configKey } of configKeyFlags()) {
    const raw = given[camelCase(name)];
    const shape = CONFIG_VALUE[name];
    const value = shape === undefined ? raw : shape(raw);
    if (value !== undefined) flags.push({ flag: `--${name}`, key: configKey, value });
  }
  return flags;
}

/**
 * Settles the flags that change how navi talks before anything is written: `--json` is codex's
 * `-o stream-json`; `--verbose` is the default (progress on stderr) and cannot go with `--quiet`.
 * Also checks `--add-dir`, `--think` and `--timeout`, so a bad value is exit 2 before any work.
 */
export function settleAgentFlags<T extends GlobalArgs & AgentFlagArgs>(args: T, from: string): T {
  let output = args.output;
  if (args.json === true) {
    if (output !== 'text' && output !== 'stream-json') {
      throw new InvalidInputError('flag_invalid', `--json is codex exec's spelling of -o stream-json; it cannot go with -o ${output}`);
    }
    output = 'stream-json';
  }
  if (args.verbose === true && args.quiet) throw new InvalidInputError('flag_invalid', '--verbose and --quiet contradict each other; give one');
  thinkFlag(args.think);
  timeoutMs(args);
  checkAddDirs(listFlag(args.addDir), resolve(from, args.cwd ?? '.'));
  for (const text of listFlag(args.systemPrompt)) {
    if (text.trim() === '') throw new InvalidInputError('flag_invalid', "--system-prompt: give the text that replaces the profile's prompt");
  }
  return output === args.output ? args : { ...args, output };
}

/**
 * `--add-dir DIR` (claude -p, codex exec; gemini's `--include-directories`): navi's file tools
 * reach the whole working directory and nothing outside it, so a directory inside it is already
 * reachable and one outside it cannot be added.
 */
export function checkAddDirs(dirs: readonly string[], cwd: string): void {
  for (const dir of dirs) {
    const path = resolve(cwd, dir);
    let isDir: boolean;
    try {
      isDir = statSync(path).isDirectory();
    } catch {
      isDir = false;
    }
    if (!isDir) throw new InvalidInputError('flag_invalid', `--add-dir ${printable(dir)}: not a directory`);
    const rel = relative(cwd, path);
    if (rel.startsWith('..') || isAbsolute(rel)) {
      throw new InvalidInputError(
        'flag_invalid',
        `--add-dir ${printable(dir)}: navi's file tools work inside one directory (${cwd}) and cannot reach ${path}; ` +
          'run from a directory that holds both (--cwd DIR)',
      );
    }
  }
}

/** `--timeout DURATION` of a one-shot run in milliseconds, or undefined. */
export function timeoutMs(args: AgentFlagArgs): number | undefined {
  const value = lastValue(args.timeout);
  return value === undefined ? undefined : parseDuration(String(value), '--timeout');
}

/** `--system-prompt TEXT` (the last one given), or undefined. */
export function systemPromptFlag(args: AgentFlagArgs): string | undefined {
  const value = lastValue(args.systemPrompt);
  return value === undefined ? undefined : String(value);
}
