/**
 * User tools (SPEC §8, §10): JavaScript modules in the working directory's `./tools/` (and in
 * the directories of config `tools.paths`) that add tools the model can call.
 *
 * ## Module contract
 * - **Files**: `*.js`, `*.mjs` or `*.cjs` directly in a tools directory (not in subdirectories).
 *   Names starting with `.` or `_` are not loaded, so `_helpers.js` can hold shared code. A
 *   `.ts`/`.mts`/`.cts` file is an error (Node 20 cannot import TypeScript without a loader)
 *   unless its compiled `.js`/`.mjs`/`.cjs` sits beside it; `.d.ts` files are ignored.
 * - **Exports**, one of: named exports `name`, `description`, `parameters`, `execute`; a default
 *   object with those keys (`module.exports = {…}` in CommonJS); or `tools`, an array of such
 *   objects (named or in the default object) to define several tools in one file.
 * - `name`: snake_case, `^[a-z][a-z0-9_]{0,63}$`, unique among built-in and user tools.
 * - `description`: non-empty string of at most 1024 characters; sent to the model (trimmed).
 * - `parameters`: a JSON Schema (draft-07 unless `$schema` names 2019-09 or 2020-12) with
 *   `type: "object"`, sent to the model byte for byte. Compiled with ajv at load, strictly:
 *   an unknown keyword (`requried`) is an error; `format` is not checked. The model's arguments
 *   are validated against it before `execute` runs (no coercion, no defaults filled in).
 * - `execute(args, ctx)`: may be async; returns a string (a successful result) or
 *   `{ ok: boolean, output: string }`. A throw or any other return value becomes a failed
 *   result the model reads, never a crash (an AbortError/TimeoutError of the tool's own, e.g. a
 *   fetch timeout, too: only the run's stop ends the run). `args` is the validated arguments (a copy).
 *   `ctx` is `{ cwd, sessionId, signal }` (frozen): the working directory, the session id and
 *   the run's AbortSignal. navi's internals (database, shell policy, event stream) stay out of
 *   reach of the API, so they can change freely; this is not a sandbox (see Loading). Under
 *   `--sandbox`, each call runs in a fresh Node process inside the sandbox
 *   (user-tool-sandboxed.ts): the module is imported anew per call, `args` and the return
 *   value cross as JSON, and `signal` never fires there (a stopped run kills the process).
 * - **Output**: capped and secret-redacted by the registry exactly like built-in tools' output.
 * - **Stopping**: when the run stops, the call returns at once even if `execute` ignores
 *   `signal`; its promise is abandoned (left running, its result discarded). Honour `signal` to
 *   actually stop work (pass it to `fetch`, child processes, timers). Code that blocks the event
 *   loop (a synchronous endless loop) cannot be interrupted by anything short of SIGKILL.
 * - **Loading**: a module runs with navi's privileges the moment it is imported; a problem in
 *   any file (import failure, bad export, bad schema, name clash) fails start-up with exit 2 and
 *   one message listing every problem by file. Under `--sandbox` the modules are imported inside
 *   the sandbox instead, all in one Node process (user-tool-load-sandboxed.ts): their top-level
 *   code never runs in navi's process, and navi checks what they export with the same rules.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { importModule } from '../dynamic-import.js';
import { InvalidInputError, isAbortError } from '../errors.js';
import type { Sandbox } from '../sandbox/modes.js';
import { isRecord, typeName } from '../util/guards.js';
import { JsonSchemaCompiler, schemaFromCheck } from './json-schema.js';
import { errorLine, importProblem, isErrorLike } from './user-tool-errors.js';
import { listModules, type UserToolDir } from './user-tool-files.js';
import { importInSandbox } from './user-tool-load-sandboxed.js';
import { executeSandboxed } from './user-tool-sandboxed.js';
import type { ToolContext, ToolDefinition, ToolResult } from './types.js';

/** Tool names a user tool may take: snake_case like the built-ins, within Ollama's limits. */
export const USER_TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** A description is part of every request; longer ones crowd the context of small local models. */
const MAX_DESCRIPTION_CHARS = 1024;

/** A module whose top-level code has not finished by then is assumed stuck (a TLA that never settles). */
const DEFAULT_IMPORT_TIMEOUT_MS = 10_000;

/** Problems listed in the load error; past that the rest are counted, not listed. */
const MAX_LISTED_PROBLEMS = 20;

/** What a user tool's `execute` receives as its second argument. */
export interface UserToolContext {
  /** The run's working directory (where navi was started, or `--cwd`). */
  readonly cwd: string;
  /** The session the call belongs to (the parent's for a sub-agent). */
  readonly sessionId: string;
  /** Fires when the run stops; pass it on to whatever the tool waits for. */
  readonly signal: AbortSignal;
}

/** How `loadUserTools` finds and loads modules. */
export interface LoadUserToolsOptions {
  /** Absolute directories, in order; a plain string is a configured directory and must exist. */
  dirs: readonly (string | UserToolDir)[];
  /** Names taken by navi's own tools (registry built-ins and agent tools such as `plan`). */
  builtinNames: ReadonlySet<string>;
  /** When set, files under it are named relative to it in messages. */
  cwd?: string;
  /**
   * Imports one module by file URL. Default: Node's `import()`. Tests pass a native importer
   * because vitest rewrites `import()` into its own module loader.
   */
  importModule?: (url: string) => Promise<unknown>;
  /** Default 10 s. */
  importTimeoutMs?: number;
  /**
   * `--sandbox`: the modules are imported inside it, in one Node process, never in navi's
   * (user-tool-load-sandboxed.ts); their calls then always run inside it too.
   */
  sandbox?: Sandbox;
}

const toolFiles = new WeakMap<ToolDefinition, string>();

/** The module file a user tool came from; undefined for built-ins. */
export function userToolFile(definition: ToolDefinition): string | undefined {
  return toolFiles.get(definition);
}

/** `typeName` with its article, for messages: `an array`, `a string`, `null`, `undefined`. */
function typeWithArticle(value: unknown): string {
  const type = typeName(value);
  return type === 'null' || type === 'undefined' ? type : /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** zod message for a value of the wrong kind: `missing` reads better than "expected string". */
function expected(what: string): { error: (issue: { input: unknown }) => string } {
  return { error: (issue) => (issue.input === undefined ? 'missing' : `must be ${what}, got ${typeWithArticle(issue.input)}`) };
}

type UserExecute = (this: unknown, args: Record<string, unknown>, ctx: UserToolContext) => unknown;

/** The shape of one exported tool; ajv checks the schema itself afterwards. */
const UserToolShape = z.object({
  name: z.string(expected('a string')).regex(USER_TOOL_NAME, {
    error: (issue) => `must be snake_case matching ${USER_TOOL_NAME.source}, got ${JSON.stringify(issue.input)}`,
  }),
  description: z
    .string(expected('a string'))
    .refine((text) => text.trim() !== '', 'must not be empty')
    .refine((text) => text.length <= MAX_DESCRIPTION_CHARS, `must be at most ${MAX_DESCRIPTION_CHARS} characters`),
  parameters: z
    .custom<Record<string, unknown>>(isRecord, expected('a JSON Schema object'))
    .refine((schema) => schema.type === 'object', 'must have type: "object" (tool arguments are a JSON object)'),
  execute: z.custom<UserExecute>((value) => typeof value === 'function', expected('a function')),
});

/** One candidate tool found in a module, before validation. */
interface Candidate {
  label: string;
  file: string;
  /** The object `execute` is called on, so a method may use `this`. */
  self: unknown;
}

/** What a module offers as tools, or why it offers none. */
function candidatesOf(namespace: unknown, file: string, display: string): Candidate[] | string {
  const ns = isRecord(namespace) ? namespace : {};
  const named = ['name', 'description', 'parameters', 'execute', 'tools'].some((key) => ns[key] !== undefined);
  const source = named ? ns : ns.default;
  if (!isRecord(source)) {
    return 'exports no tool: export name, description, parameters and execute, a default object with them, or a tools array';
  }
  if (source.tools === undefined) return [{ label: display, file, self: source }];
  if (source.name !== undefined) return 'exports both `tools` and `name`; use one or the other';
  if (!Array.isArray(source.tools) || source.tools.length === 0) {
    return `tools: must be a non-empty array of tool objects, got ${typeWithArticle(source.tools)}`;
  }
  return source.tools.map((self: unknown, index) => ({ label: `${display} tools[${index}]`, file, self }));
}

/** Settles like `promise`, or rejects with `onTimeout()` after `ms`. */
async function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** What `signal.throwIfAborted()` would throw (normally an AbortError). */
function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return isErrorLike(reason) ? reason : new DOMException('This operation was aborted', 'AbortError');
}

/**
 * Settles like `promise`, or rejects with the signal's reason the moment it fires. On abort the
 * promise is abandoned: it keeps running and whatever it settles to is ignored.
 */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  let stopListening = (): void => {};
  const aborted = new Promise<never>((_resolve, reject) => {
    const onAbort = (): void => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    stopListening = () => signal.removeEventListener('abort', onAbort);
  });
  return Promise.race([promise, aborted]).finally(stopListening);
}

/** A user tool's return value as a result; anything outside the contract is a failure. */
function toResult(name: string, value: unknown): ToolResult {
  if (typeof value === 'string') return { ok: true, output: value };
  if (isRecord(value) && typeof value.ok === 'boolean' && typeof value.output === 'string') {
    return { ok: value.ok, output: value.output };
  }
  return {
    ok: false,
    output: `tool '${name}' returned ${typeWithArticle(value)}; a user tool must return a string or { ok: boolean, output: string }`,
  };
}

function defineUserTool(
  shape: z.infer<typeof UserToolShape>,
  self: unknown,
  parameters: Record<string, unknown>,
  schema: z.ZodType,
  file: string,
  loadedIn: Sandbox | undefined,
): ToolDefinition {
  const { name } = shape;
  return {
    name,
    description: shape.description.trim(),
    schema,
    parameters,
    async execute(args: unknown, ctx: ToolContext): Promise<ToolResult> {
      ctx.signal.throwIfAborted();
      const userCtx: UserToolContext = Object.freeze({ cwd: ctx.cwd, sessionId: ctx.sessionId, signal: ctx.signal });
      // A copy, so a tool that mutates its arguments cannot change the stored tool call.
      const copy = structuredClone(args) as Record<string, unknown>;
      // A module loaded inside the sandbox has only a look-alike here: its calls run there whatever the context says.
      const sandbox = ctx.shell.sandbox ?? loadedIn;
      if (sandbox) {
        // Under --sandbox the call runs in a sandboxed Node process, like the shell tool's commands.
        const outcome = await executeSandboxed(sandbox, file, name, copy, ctx);
        if ('error' in outcome) throw new Error(outcome.error);
        return toResult(name, outcome.value);
      }
      // Inside a promise so a synchronous throw is a rejection like an async one.
      const pending = new Promise<unknown>((resolve) => resolve(shape.execute.call(self, copy, userCtx)));
      let value: unknown;
      try {
        value = await untilAborted(pending, ctx.signal);
      } catch (err) {
        // The registry lets abort errors through to stop the run. A tool's own timeout (a fetch
        // with `AbortSignal.timeout`) while the run goes on is just that tool failing.
        if (isAbortError(err) && !ctx.signal.aborted) throw new Error(errorLine(err), { cause: err });
        throw err;
      }
      return toResult(name, value);
    },
  };
}

/**
 * One candidate as a definition, or its problems. A name clash is a problem but the tool is still
 * checked, so a single run reports everything wrong with it.
 */
async function checkCandidate(
  candidate: Candidate,
  compiler: JsonSchemaCompiler,
  owners: Map<string, string>,
  builtinNames: ReadonlySet<string>,
  loadedIn: Sandbox | undefined,
): Promise<ToolDefinition | string[]> {
  if (!isRecord(candidate.self)) {
    return [`must be an object with name, description, parameters and execute, got ${typeWithArticle(candidate.self)}`];
  }
  const parsed = UserToolShape.safeParse(candidate.self);
  if (!parsed.success) {
    return parsed.error.issues.map((issue) => `${issue.path.map(String).join('.')}: ${issue.message}`);
  }
  const problems: string[] = [];
  const { name } = parsed.data;
  const owner = owners.get(name);
  if (builtinNames.has(name)) problems.push(`name '${name}' is a built-in tool; choose another name`);
  else if (owner !== undefined) problems.push(`name '${name}' is already defined by ${owner}`);
  else owners.set(name, candidate.label);
  let parameters: Record<string, unknown>;
  try {
    // The JSON form is what the model is sent and what ajv compiles, detached from the module's object.
    parameters = JSON.parse(JSON.stringify(parsed.data.parameters)) as Record<string, unknown>;
  } catch (err) {
    return [...problems, `parameters: not JSON-serialisable (${errorLine(err)})`];
  }
  const compiled = await compiler.compile(parameters);
  if (!compiled.ok) return [...problems, compiled.problem];
  if (problems.length > 0) return problems;
  const definition = defineUserTool(parsed.data, candidate.self, parameters, schemaFromCheck(compiled.check), candidate.file, loadedIn);
  toolFiles.set(definition, candidate.file);
  return definition;
}

function formatProblems(problems: readonly string[]): string {
  const listed = problems.slice(0, MAX_LISTED_PROBLEMS);
  const more = problems.length - listed.length;
  const lines = listed.map((problem) => `  ${problem}`);
  if (more > 0) lines.push(`  … and ${more} more`);
  const count = `${problems.length} problem${problems.length === 1 ? '' : 's'}`;
  return [`invalid user tools (${count}); fix or remove these files:`, ...lines].join('\n');
}

/**
 * Loads every user tool module in `dirs`. Returns definitions ready for the `ToolRegistry`:
 * arguments validated with the module's JSON Schema (ajv), `parameters` sent to the model as
 * written, results normalised, calls stoppable. Throws one `InvalidInputError` (`tool_invalid`,
 * exit 2) listing every problem of every file when anything is wrong.
 */
export async function loadUserTools(options: LoadUserToolsOptions): Promise<ToolDefinition[]> {
  const cwd = options.cwd;
  const display = (file: string): string => {
    if (cwd === undefined) return file;
    const rel = path.relative(cwd, file);
    return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file;
  };
  const problems: string[] = [];
  const files = await listModules(options.dirs, display, problems);
  if (files.length === 0 && problems.length === 0) return [];

  const timeoutMs = options.importTimeoutMs ?? DEFAULT_IMPORT_TIMEOUT_MS;
  const stuck = (): Error => new Error(`still loading after ${timeoutMs} ms (a top-level await that never settles?)`);
  let loaded: ({ file: string; shown: string; namespace: unknown } | { file: string; shown: string; problem: string })[];
  if (options.sandbox !== undefined) {
    // Their top-level code runs inside; navi checks the description they sent as it checks a module.
    const sandbox = options.sandbox;
    const answers = await importInSandbox(sandbox, files.map((f) => f.file), { cwd: cwd ?? sandbox.cwd, timeoutMs });
    loaded = await Promise.all(
      files.map(async ({ file, display: shown }, i) => {
        const answer = answers[i] ?? { problem: 'failed to load: no answer from the sandbox' };
        if ('namespace' in answer) return { file, shown, namespace: answer.namespace };
        if ('problem' in answer) return { file, shown, problem: answer.problem };
        if ('timedOut' in answer) return { file, shown, problem: await importProblem(stuck(), file) };
        const notes = answer.notes.map((note) => ` [${note}]`).join('');
        return { file, shown, problem: `${await importProblem(answer.thrown, file)}${notes}` };
      }),
    );
  } else {
    const importFile = options.importModule ?? importModule;
    // Imported together: their top-level code runs interleaved anyway, and stuck ones time out once.
    loaded = await Promise.all(
      files.map(async ({ file, display: shown }) => {
        try {
          const imported = importFile(pathToFileURL(file).href);
          return { file, shown, namespace: await withTimeout(imported, timeoutMs, stuck) };
        } catch (err) {
          return { file, shown, problem: await importProblem(err, file) };
        }
      }),
    );
  }

  const compiler = new JsonSchemaCompiler();
  const definitions: ToolDefinition[] = [];
  const owners = new Map<string, string>();
  for (const module of loaded) {
    if ('problem' in module) {
      problems.push(`${module.shown}: ${module.problem}`);
      continue;
    }
    const candidates = candidatesOf(module.namespace, module.file, module.shown);
    if (typeof candidates === 'string') {
      problems.push(`${module.shown}: ${candidates}`);
      continue;
    }
    for (const candidate of candidates) {
      const outcome = await checkCandidate(candidate, compiler, owners, options.builtinNames, options.sandbox);
      if (Array.isArray(outcome)) problems.push(...outcome.map((problem) => `${candidate.label}: ${problem}`));
      else definitions.push(outcome);
    }
  }
  if (problems.length > 0) throw new InvalidInputError('tool_invalid', formatProblems(problems));
  return definitions;
}
