/**
 * The flags `navi run` shares with `claude -p`, `codex exec`, `gemini -p` and `goose run`
 * (issue 11), turned into what the agent takes: `--output-schema FILE`, `--output-last-message
 * FILE`, `-c/--continue`, `--append-system-prompt TEXT`, `--allowed-tools`/`--disallowed-tools`,
 * and piped stdin beside a prompt argument. Each problem with them is exit 2 naming the flag.
 */
import { statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { OutputSchema, ToolFilter } from '../agent/agent-types.js';
import { parseToolList, unknownFilterNames } from '../agent/tool-filter.js';
import { readUserFile } from '../config/read-user-file.js';
import { describeError, InvalidInputError } from '../errors.js';
import type { Store } from '../store/types.js';
import { isRecord } from '../util/guards.js';

/** The run flags of this file, as yargs (or the fast path) gives them. */
export interface ConventionArgs {
  outputSchema?: string;
  outputLastMessage?: string;
  appendSystemPrompt?: string;
  allowedTools?: unknown;
  disallowedTools?: unknown;
  continue?: boolean;
}

/** A schema file is JSON Schema, not data: a few hundred KB is already absurd. */
const MAX_SCHEMA_FILE_BYTES = 1024 * 1024;

/**
 * `--output-schema FILE` (relative to the working directory, like `--file`): a JSON Schema whose
 * root is an object schema, compiled with ajv. Ollama takes any JSON Schema object as `format`.
 */
export async function loadOutputSchema(file: string, cwd: string): Promise<OutputSchema> {
  const path = resolve(cwd, file);
  const text = readUserFile(path, { display: `--output-schema ${file}`, code: 'flag_invalid', maxBytes: MAX_SCHEMA_FILE_BYTES, kind: 'schema files' });
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (err) {
    throw new InvalidInputError('flag_invalid', `--output-schema ${file}: not valid JSON (${describeError(err)})`);
  }
  if (!isRecord(schema)) throw new InvalidInputError('flag_invalid', `--output-schema ${file}: a JSON Schema is a JSON object`);
  const { JsonSchemaCompiler } = await import('../tools/json-schema.js');
  const compiled = await new JsonSchemaCompiler().compile(schema, 'schema');
  if (!compiled.ok) throw new InvalidInputError('flag_invalid', `--output-schema ${file}: ${compiled.problem}`);
  const { check } = compiled;
  return {
    schema,
    check: (value) => check(value).map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(root)'}: ${issue.message}`),
  };
}

/** `--allowed-tools` / `--disallowed-tools` as a filter, or undefined when neither was given. */
export function toolFilterFrom(args: ConventionArgs): ToolFilter | undefined {
  const only = parseToolList(args.allowedTools);
  const except = parseToolList(args.disallowedTools);
  if (only === undefined && except === undefined) return undefined;
  if (only !== undefined && only.length === 0) throw new InvalidInputError('flag_invalid', '--allowed-tools: name at least one tool (comma-separated)');
  return { ...(only !== undefined ? { only } : {}), ...(except !== undefined ? { except } : {}) };
}

/** Refuses names the profile does not offer: the filter narrows, it never grants (tool-filter.ts). */
export function checkToolFilter(filter: ToolFilter, profileId: string, offered: readonly string[]): void {
  const unknown = unknownFilterNames(offered, filter);
  if (unknown.length > 0) {
    const flag = (filter.only ?? []).includes(unknown[0] ?? '') ? '--allowed-tools' : '--disallowed-tools';
    throw new InvalidInputError(
      'flag_invalid',
      `${flag}: profile '${profileId}' has no tool ${unknown.map((n) => `'${n}'`).join(', ')}; its tools: ${offered.join(', ')}`,
    );
  }
}

/** `-c/--continue`: the most recently active chat session started in `cwd`. */
export async function latestSessionIn(store: Store, cwd: string): Promise<string> {
  const [latest] = await store.sessions.list({ kind: 'chat', cwd, limit: 1 });
  if (!latest) throw new InvalidInputError('session_not_found', `--continue: no session was started in ${cwd}; start one with: navi run "…"`);
  return latest.id;
}

/**
 * `--output-last-message FILE` (relative to the working directory): the final answer, as-is.
 * Returns why it could not be written, or null.
 */
export function writeLastMessage(file: string, cwd: string, text: string): string | null {
  try {
    writeFileSync(resolve(cwd, file), text.endsWith('\n') || text === '' ? text : `${text}\n`);
    return null;
  } catch (err) {
    return `--output-last-message ${file}: cannot write it (${describeError(err)})`;
  }
}

/** Before the run: a file whose directory is missing (or that is a directory) fails now, not after the work. */
export function checkLastMessageTarget(file: string, cwd: string): void {
  const path = resolve(cwd, file);
  let dirOk: boolean;
  try {
    dirOk = statSync(dirname(path)).isDirectory();
  } catch {
    dirOk = false;
  }
  if (!dirOk) throw new InvalidInputError('flag_invalid', `--output-last-message ${file}: directory ${dirname(path)} does not exist`);
  try {
    if (statSync(path).isDirectory()) throw new InvalidInputError('flag_invalid', `--output-last-message ${file}: is a directory`);
  } catch (err) {
    if (err instanceof InvalidInputError) throw err;
  }
}

/** Checked before anything runs: a run that cannot write its answer at the end must not start. */
export function checkFlagCombinations(args: ConventionArgs & { session?: string; file?: string }): void {
  if (args.continue === true && args.session !== undefined) {
    throw new InvalidInputError('flag_invalid', '--continue and --session both name the session to continue; give one');
  }
}

/**
 * The instruction (argument) and the material (stdin) in one message, the material fenced so
 * the model cannot take it for the instruction's end (codex exec does the same with `<stdin>`).
 */
export function combinePrompt(instruction: string, material: string): string {
  return `${instruction}\n\n<stdin>\n${material.replace(/\n$/, '')}\n</stdin>`;
}
