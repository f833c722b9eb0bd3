/**
 * A user tool's call under `--sandbox`: `execute` runs in a fresh Node process inside the same
 * sandbox as the shell tool's commands, so what the tool writes, connects to or starts is held
 * to the same rules. The module was loaded (and checked) in navi's process at start-up; here it
 * is imported again for each call, so module state does not carry from one call to the next.
 * The call's request and its result cross through files in the sandbox's private temp directory
 * (stdout is the tool's own, as `console.log` would print it).
 */
import { randomUUID } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Sandbox } from '../sandbox/modes.js';
import { sandboxRefusals } from '../sandbox/refusals.js';
import { runCommand } from './run-command.js';
import { shellQuote } from './shell-policy.js';
import type { ToolContext } from './types.js';

/** A user tool's call has no timeout of its own in navi's process; inside, only a stuck one is stopped. */
const CALL_TIMEOUT_MS = 24 * 60 * 60 * 1000;

/** Output of the child kept for a crash report. */
const MAX_OUTPUT_BYTES = 16 * 1024;

/**
 * Imports the module, finds the tool by name (the module contract of user-tools.ts: named
 * exports, a default object, or a `tools` array), calls `execute`, writes `{ value }` or
 * `{ error }` to the result file. Plain JavaScript for `node -e` (argv[1]: the request file):
 * nothing of navi's is loaded.
 */
const RUNNER = `
const fs = require('node:fs');
const { pathToFileURL } = require('node:url');
const req = JSON.parse(fs.readFileSync(process.argv[1], 'utf8'));
(async () => {
  let out;
  try {
    const ns = await import(pathToFileURL(req.file).href);
    const named = ['name', 'description', 'parameters', 'execute', 'tools'].some((k) => ns[k] !== undefined);
    const source = named ? ns : ns.default;
    const list = source && source.tools !== undefined ? source.tools : [source];
    const self = list.find((t) => t && t.name === req.name);
    if (!self) throw new Error('tool ' + req.name + ' is no longer in ' + req.file);
    const ctx = Object.freeze({ ...req.ctx, signal: new AbortController().signal });
    out = { value: await self.execute.call(self, req.args, ctx) };
  } catch (err) {
    const e = err && typeof err.message === 'string' ? err : { name: 'Error', message: String(err) };
    out = { error: (e.name && e.name !== 'Error' ? e.name + ': ' : '') + String(e.message).split('\\n')[0] };
  }
  fs.writeFileSync(req.result, JSON.stringify(out === undefined ? {} : out));
  process.exit(0);
})();
`;

/** What the call came to: the tool's return value, or the error it threw. */
export type SandboxedOutcome = { value: unknown } | { error: string };

/** Runs `execute` of tool `name` from `file` inside `sandbox`; an abort of the run propagates. */
export async function executeSandboxed(
  sandbox: Sandbox,
  file: string,
  name: string,
  args: Record<string, unknown>,
  ctx: Pick<ToolContext, 'cwd' | 'sessionId' | 'signal' | 'emit' | 'redact'>,
): Promise<SandboxedOutcome> {
  const id = randomUUID();
  const requestFile = path.join(sandbox.tmpDir, `tool-call-${id}.json`);
  const resultFile = path.join(sandbox.tmpDir, `tool-result-${id}.json`);
  const request = { file, name, args, ctx: { cwd: ctx.cwd, sessionId: ctx.sessionId }, result: resultFile };
  await writeFile(requestFile, JSON.stringify(request), { mode: 0o600 });
  let result: Awaited<ReturnType<typeof runCommand>>;
  try {
    // Through argv and a file, not the environment: what reaches the sandbox's environment is the sandbox's choice.
    result = await runCommand({
      command: `exec ${shellQuote(process.execPath)} -e ${shellQuote(RUNNER)} ${shellQuote(requestFile)}`,
      cwd: ctx.cwd,
      timeoutMs: CALL_TIMEOUT_MS,
      maxOutputBytes: MAX_OUTPUT_BYTES,
      signal: ctx.signal,
      sandbox,
    });
  } finally {
    await rm(requestFile, { force: true });
  }
  if (result.aborted) ctx.signal.throwIfAborted();
  let outcome: SandboxedOutcome;
  try {
    outcome = JSON.parse(await readFile(resultFile, 'utf8')) as SandboxedOutcome;
  } catch {
    const status = result.exitCode !== null ? `exit code ${result.exitCode}` : `signal ${result.exitSignal ?? 'unknown'}`;
    outcome = { error: `the tool's sandboxed process ended (${status}) without a result${result.output.trim() !== '' ? `: ${result.output.trim().replace(/\s*\n\s*/g, ' | ')}` : ''}` };
  } finally {
    await rm(resultFile, { force: true });
  }
  if (!('error' in outcome)) return outcome;
  // Named as for the shell tool, so the model knows the sandbox (not a bug) stopped it.
  const refusals = sandboxRefusals(`${outcome.error}\n${result.output}`, sandbox);
  for (const refusal of refusals) ctx.emit({ type: 'warning', code: 'sandbox_refused', message: ctx.redact(refusal.message) });
  // One line: the registry shows the first line of a thrown error.
  return { error: [outcome.error, ...refusals.map((r) => `[${r.message}]`)].join(' ') };
}
