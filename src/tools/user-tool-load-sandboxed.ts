/**
 * User tool modules loaded inside the sandbox (issue 35 item 11, SPEC §16). Importing a module
 * runs its top-level code; under `--sandbox` that code must run where the model's commands run,
 * never in navi's own process (with navi's environment, database connection and file access).
 *
 * One Node process inside the sandbox imports every module (one start for all of them) and
 * writes, per module as it settles, what the module contract looks at (user-tools.ts): the
 * exported names and their types, functions as markers, each `parameters` as the JSON navi
 * would send, or the error the import threw. navi rebuilds a look-alike of each namespace from
 * that and validates it with the same code as an in-process load, so the messages (and the
 * exit 2 of a bad module) are the same. Calls then run sandboxed, each in a fresh process
 * (user-tool-sandboxed.ts): the look-alike's functions are never called.
 */
import { randomUUID } from 'node:crypto';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Sandbox } from '../sandbox/modes.js';
import { sandboxRefusals } from '../sandbox/refusals.js';
import { isRecord } from '../util/guards.js';
import { runCommand } from './run-command.js';
import { shellQuote } from './shell-policy.js';

/** Past the modules' own import timeout, how long Node may take to start inside (a loaded machine). */
const START_GRACE_MS = 60_000;

/** Output of the loader kept for a report when it dies. */
const MAX_OUTPUT_BYTES = 16 * 1024;

/** A result file larger than this is not metadata; a module that makes it so is refused. */
const MAX_RESULT_BYTES = 32 * 1024 * 1024;

/** How many levels of a namespace are described: namespace → default → tools → tool → its fields. */
const DEPTH = 5;

/**
 * The loader, plain JavaScript for `node -e` (nothing of navi's is loaded inside). argv[1] is
 * the request file: `{ files, timeoutMs, result }`. Each settled module appends one JSON line
 * `{ i, namespace }`, `{ i, error }` or `{ i, timeout: true }` to the result file; when all have
 * settled the process exits (a module's pending timers or sockets do not keep it alive).
 */
const LOADER = `
const fs = require('node:fs');
const { pathToFileURL } = require('node:url');
const req = JSON.parse(fs.readFileSync(process.argv[1], 'utf8'));
const KEYS = ['name', 'description', 'parameters', 'execute', 'tools', 'default'];
const errorOf = (e) => {
  try {
    if (e !== null && typeof e === 'object' && typeof e.message === 'string' && typeof e.name === 'string') return { name: e.name, message: e.message };
    return { text: String(e) };
  } catch { return { text: 'unknown error' }; }
};
const get = (v, k) => { try { return v[k]; } catch { return undefined; } };
function enc(v, depth, key) {
  switch (typeof v) {
    case 'undefined': return { $: 'undefined' };
    case 'function': return { $: 'function' };
    case 'bigint': return { $: 'bigint' };
    case 'symbol': return { $: 'symbol' };
    case 'number': return Number.isFinite(v) ? v : { $: 'number', v: String(v) };
    case 'string': case 'boolean': return v;
  }
  if (v === null) return null;
  if (key === 'parameters' && !Array.isArray(v)) {
    const out = { $: 'schema', type: enc(get(v, 'type'), 0) };
    try { const json = JSON.stringify(v); if (json !== undefined) out.json = json; } catch (e) { out.error = errorOf(e); }
    return out;
  }
  if (Array.isArray(v)) return { $: 'array', items: depth > 0 ? Array.from(v, (x) => enc(x, depth - 1)) : [] };
  const keys = {};
  if (depth > 0) for (const k of KEYS) { const x = get(v, k); if (x !== undefined) keys[k] = enc(x, depth - 1, k); }
  return { $: 'object', keys };
}
const put = (line) => fs.appendFileSync(req.result, JSON.stringify(line) + '\\n');
Promise.all(req.files.map((file, i) => new Promise((settle) => {
  const timer = setTimeout(() => { put({ i, timeout: true }); settle(); }, req.timeoutMs);
  import(pathToFileURL(file).href).then(
    (ns) => { clearTimeout(timer); let line; try { line = { i, namespace: enc(ns, ${DEPTH}) }; } catch (e) { line = { i, error: errorOf(e) }; } put(line); settle(); },
    (e) => { clearTimeout(timer); put({ i, error: errorOf(e) }); settle(); },
  );
}))).then(() => process.exit(0));
`;

/** What the import of one module came to, as loadUserTools reads it. */
export type SandboxedImport =
  /** A look-alike of the module's namespace. */
  | { namespace: unknown }
  /** What the import threw (an error-like `{name, message}` or the thrown text), with what the sandbox refused. */
  | { thrown: unknown; notes: string[] }
  /** Still loading after the timeout. */
  | { timedOut: true }
  /** The loader never said: it died (a module called `process.exit`, a crash) or could not start. */
  | { problem: string };

/** Stands in for a function the module exports; never called (calls run sandboxed). */
function sandboxedFunction(): never {
  throw new Error('this user tool was loaded inside the sandbox; it runs there');
}

/** An error with the name and message the module's error had. */
function errorFrom(value: unknown): unknown {
  if (isRecord(value) && typeof value.name === 'string' && typeof value.message === 'string') {
    const err = new Error(value.message);
    err.name = value.name;
    return err;
  }
  return isRecord(value) && typeof value.text === 'string' ? value.text : 'unknown error';
}

/** The look-alike of an encoded value (the LOADER's `enc`). */
export function decodeValue(value: unknown): unknown {
  if (!isRecord(value)) return value;
  switch (value.$) {
    case 'undefined':
      return undefined;
    case 'function':
      return sandboxedFunction;
    case 'bigint':
      return 0n;
    case 'symbol':
      return Symbol('sandboxed');
    case 'number':
      return Number(value.v);
    case 'array':
      return Array.isArray(value.items) ? value.items.map(decodeValue) : [];
    case 'schema': {
      // JSON.stringify of it gives the module's JSON, or throws the module's error: checkCandidate
      // serialises `parameters` and reports a failure exactly as for the module's own object.
      const schema: Record<string, unknown> = { type: decodeValue(value.type) };
      const json = typeof value.json === 'string' ? value.json : undefined;
      const error = value.error;
      Object.defineProperty(schema, 'toJSON', {
        enumerable: false,
        value: (): unknown => {
          if (error !== undefined) throw errorFrom(error);
          return json === undefined ? undefined : JSON.parse(json);
        },
      });
      return schema;
    }
    default: {
      const out: Record<string, unknown> = {};
      if (isRecord(value.keys)) for (const [key, item] of Object.entries(value.keys)) out[key] = decodeValue(item);
      return out;
    }
  }
}

/** One line of the result file, when it is one. */
function parseLine(line: string, count: number): { i: number; entry: Record<string, unknown> } | null {
  try {
    const entry: unknown = JSON.parse(line);
    if (!isRecord(entry) || typeof entry.i !== 'number' || !Number.isInteger(entry.i) || entry.i < 0 || entry.i >= count) return null;
    return { i: entry.i, entry };
  } catch {
    return null;
  }
}

/**
 * Imports `files` in one Node process inside `sandbox`; one answer per file, in order. Never
 * throws for what a module does: a module that kills the loader is a problem of that module
 * (and of every other one still loading then).
 */
export async function importInSandbox(sandbox: Sandbox, files: readonly string[], opts: { cwd: string; timeoutMs: number; signal?: AbortSignal }): Promise<SandboxedImport[]> {
  const id = randomUUID();
  const requestFile = path.join(sandbox.tmpDir, `tool-load-${id}.json`);
  const resultFile = path.join(sandbox.tmpDir, `tool-load-${id}.jsonl`);
  await writeFile(requestFile, JSON.stringify({ files, timeoutMs: opts.timeoutMs, result: resultFile }), { mode: 0o600 });
  let run: Awaited<ReturnType<typeof runCommand>>;
  let text: string;
  try {
    // Through argv and a file, not the environment: what reaches the sandbox's environment is the sandbox's choice.
    run = await runCommand({
      command: `exec ${shellQuote(process.execPath)} -e ${shellQuote(LOADER)} ${shellQuote(requestFile)}`,
      cwd: opts.cwd,
      timeoutMs: opts.timeoutMs + START_GRACE_MS,
      maxOutputBytes: MAX_OUTPUT_BYTES,
      signal: opts.signal ?? new AbortController().signal,
      sandbox,
    });
    const size = await stat(resultFile).then((s) => s.size, () => 0);
    if (size > MAX_RESULT_BYTES) {
      return files.map(() => ({ problem: `failed to load: the modules' description inside the sandbox is larger than ${MAX_RESULT_BYTES / 1024 / 1024} MB` }));
    }
    text = size > 0 ? await readFile(resultFile, 'utf8') : '';
  } finally {
    await Promise.all([rm(requestFile, { force: true }), rm(resultFile, { force: true })]);
  }
  const answers: (SandboxedImport | undefined)[] = files.map(() => undefined);
  for (const line of text.split('\n')) {
    const parsed = parseLine(line, files.length);
    if (parsed === null || answers[parsed.i] !== undefined) continue;
    const { entry } = parsed;
    if (entry.timeout === true) answers[parsed.i] = { timedOut: true };
    else if ('error' in entry) {
      const thrown = errorFrom(entry.error);
      // The message names the refused path (`EROFS: read-only file system, open '/x'`): the note is this module's own.
      const said = typeof thrown === 'string' ? thrown : (thrown as Error).message;
      answers[parsed.i] = { thrown, notes: sandboxRefusals(said, sandbox).map((r) => r.message) };
    } else answers[parsed.i] = { namespace: decodeValue(entry.namespace) };
  }
  const ended = run.spawnError !== undefined
    ? `could not start: ${run.spawnError}`
    : run.timedOut
      ? 'timed out'
      : run.exitCode !== null
        ? `exit code ${run.exitCode}`
        : `signal ${run.exitSignal ?? 'unknown'}`;
  const output = run.output.trim().replace(/\s*\n\s*/g, ' | ');
  const died = `failed to load: the sandboxed process loading the tool modules ended (${ended}) before this module finished loading${output !== '' ? `: ${output.slice(-500)}` : ''}`;
  return answers.map((answer) => answer ?? { problem: died });
}
