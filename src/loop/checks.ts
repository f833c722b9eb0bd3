/**
 * The task's `checks` and `ticket.run`, run by the runner after each agent turn (SPEC §6, §7.2):
 * in the run's working directory, one at a time, each in its own process group with its own
 * timeout, output capped. Their exit codes — not the model's report — decide `tests_passing`
 * and `ticket_closed`; a failing check's output tail feeds the state hash's error digest.
 *
 * Under `--sandbox` they run in the same sandbox as the model's commands (SPEC §16): a check
 * runs files the model can rewrite (`sh check.sh`, `npm test` → package.json), so outside the
 * sandbox a check would be the model's way out of it.
 */
import type { Sandbox } from '../sandbox/modes.js';
import { sandboxRefusals } from '../sandbox/refusals.js';
import { runCommand } from '../tools/run-command.js';
import type { CheckResult, TicketResult } from './evidence.js';
import type { TaskCheck } from './task-file.js';

/** Output kept per check while it runs (head + tail); the tail is what explains a failure. */
const CHECK_OUTPUT_BYTES = 64 * 1024;

/** Characters of a check's output kept in the evidence (and the database). */
export const OUTPUT_TAIL_CHARS = 4000;

/** Seconds a ticket command may take: it asks a tracker over the network, nothing more. */
export const TICKET_TIMEOUT_S = 60;

/** What running checks needs. */
export interface CheckEnv {
  cwd: string;
  /** Stops a check early (interrupt, deadline); the result then says it did not finish. */
  signal: AbortSignal;
  /** Removes secret values from output before it is kept. */
  redact: (text: string) => string;
  /** Environment of the commands (default: navi's own). */
  env?: NodeJS.ProcessEnv;
  /** `--sandbox`: the checks run inside it, like the model's commands (absent: as navi runs). */
  sandbox?: Sandbox;
  /** Told each thing the sandbox refused; `what` names the command for people: `check "tests"`, `the ticket command`. */
  onSandboxRefusal?: (what: string, message: string) => void;
}

/** The end of `text`, at most `max` characters, cut at a line start when one is near. */
export function tail(text: string, max = OUTPUT_TAIL_CHARS): string {
  if (text.length <= max) return text;
  const cut = text.slice(-max);
  const nl = cut.indexOf('\n');
  return nl >= 0 && nl < 200 ? cut.slice(nl + 1) : cut;
}

/** Runs one command to a CheckResult. */
async function runOne(name: string, command: string, timeoutS: number, env: CheckEnv, what = `check ${JSON.stringify(name)}`): Promise<CheckResult> {
  const r = await runCommand({
    command,
    cwd: env.cwd,
    timeoutMs: timeoutS * 1000,
    maxOutputBytes: CHECK_OUTPUT_BYTES,
    signal: env.signal,
    // The cap cuts the output: redacting there leaves no piece of a secret split by the cut.
    redact: env.redact,
    ...(env.env !== undefined ? { env: env.env } : {}),
    ...(env.sandbox !== undefined ? { sandbox: env.sandbox } : {}),
  });
  let out = r.output;
  if (r.spawnError !== undefined) out += `\n[could not start: ${r.spawnError}]`;
  else if (r.timedOut) out += `\n[timed out after ${timeoutS} s]`;
  // At the end, where the tail keeps it: whoever reads why a check failed learns the sandbox stopped it.
  if (env.sandbox !== undefined) {
    const refusals = sandboxRefusals(r.output, env.sandbox);
    out = withNotes(out, refusals.map((refusal) => refusal.message));
    for (const refusal of refusals) env.onSandboxRefusal?.(what, refusal.message);
  }
  const result: CheckResult = {
    name,
    exitCode: r.timedOut || r.aborted ? null : r.exitCode,
    durationMs: Math.round(r.durationMs),
    outputTail: tail(env.redact(out)),
  };
  if (r.timedOut) result.timedOut = true;
  return result;
}

/** `text` followed by one `[note]` line each, as the shell tool adds what the sandbox refused. */
export function withNotes(text: string, notes: readonly string[]): string {
  if (notes.length === 0) return text;
  return `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}${notes.map((note) => `[${note}]`).join('\n')}`;
}

/** Runs the checks in order; stops early (the rest not run) when `signal` fires. */
export async function runChecks(checks: readonly TaskCheck[], env: CheckEnv): Promise<CheckResult[]> {
  const out: CheckResult[] = [];
  for (const c of checks) {
    if (env.signal.aborted) break;
    out.push(await runOne(c.name, c.run, c.timeoutS, env));
  }
  return out;
}

/** What the shell's exit codes 126 and 127 mean: the check never ran at all. */
const CANNOT_RUN: Readonly<Record<number, string>> = {
  126: 'exit 126: found but not executable',
  127: 'exit 127: command not found',
};

/**
 * The warning for a check that could not run (issue 18 item 11): its command does not exist or
 * cannot be executed, so it fails every iteration whatever the model does and the run would end
 * as "stagnation". Null for a check that ran (passed or failed on its own terms).
 */
export function cannotRunWarning(result: CheckResult, command: string): string | null {
  const why = result.exitCode === null ? undefined : CANNOT_RUN[result.exitCode];
  if (why === undefined) return null;
  return `check "${result.name}" cannot run (${why}): \`${command}\`. It fails every iteration whatever the model does; fix the task's checks (or install the command)`;
}

/** Runs the ticket command; exit 0 means the ticket is closed. */
export async function runTicket(ticket: { run: string }, env: CheckEnv): Promise<TicketResult> {
  const r = await runOne('ticket', ticket.run, TICKET_TIMEOUT_S, env, 'the ticket command');
  return { exitCode: r.exitCode };
}
