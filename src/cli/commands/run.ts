/**
 * `navi run [prompt..]`: one agent turn with the full tool loop, rendered in the chosen output
 * mode, ending in a `result` and the SPEC §4 exit code — or a handover to loop mode, which
 * `dispatch.ts` follows.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { toolsForProfile } from '../../agent/agent.js';
import type { AgentEvent, StopReason } from '../../agent/events.js';
import type { TurnOutcome } from '../../agent/agent.js';
import { TURN_EXIT_STATUS, turnResult } from '../../agent/result-event.js';
import { describeError, EXIT, InvalidInputError } from '../../errors.js';
import type { GlobalArgs } from '../global-args.js';
import type { CliHost } from '../host.js';
import { timeoutMs, type AgentFlagArgs } from '../agent-flags.js';
import { withAgentCommand } from '../command-lifecycle.js';
import { createRuntime, resolveProfile, turnBase, type Runtime } from '../runtime.js';
import { reportMcpWarnings } from '../mcp-runtime.js';
import { configFor, resolveCwd } from '../setup.js';
import type { Output } from '../output.js';
import {
  checkFlagCombinations,
  checkLastMessageTarget,
  checkToolFilter,
  combinePrompt,
  latestSessionIn,
  loadOutputSchema,
  toolFilterFrom,
  writeLastMessage,
  type ConventionArgs,
} from '../run-conventions.js';
import { promptText, readAllStdin, readStdinWithGrace, stdinGraceMs } from '../stdin-input.js';

interface RunArgs extends GlobalArgs, ConventionArgs, AgentFlagArgs {
  prompt?: string[];
  file?: string;
  session?: string;
  maxIterations?: number;
  /** `--no-loop` sets false: never enter loop mode. */
  loop?: boolean;
}

/**
 * Why this run should enter loop mode (SPEC §6): `loop_mode.enabled` or a trigger phrase in the
 * prompt — unless `--no-loop`, "just do this once", `--session` (a loop has its own session), or
 * this navi runs inside a loop already (loops never nest). Null: stay one-shot.
 */
async function loopEntry(args: RunArgs, prompt: string, loopModeEnabled: boolean, env: Record<string, string | undefined>): Promise<string | null> {
  // A continued session, or a script that wants one structured answer, is one shot.
  if (args.loop === false || args.session !== undefined || args.continue === true || args.outputSchema !== undefined) return null;
  const [{ detectLoopTrigger, isJustOnce }, { LOOP_ENV }] = await Promise.all([import('../../loop/triggers.js'), import('../../loop/nesting.js')]);
  if (env[LOOP_ENV] || isJustOnce(prompt)) return null;
  const trigger = detectLoopTrigger(prompt);
  if (trigger !== null) return `entering loop mode: the prompt says "${trigger}" (pass --no-loop for one shot)`;
  if (loopModeEnabled) return 'entering loop mode: loop_mode.enabled is true in the configuration (pass --no-loop for one shot)';
  return null;
}

/**
 * The prompt from arguments, `--file F` (`-` for stdin), or piped stdin; arguments and piped
 * stdin together are the instruction and its material (`combinePrompt`, stdin-input.ts).
 */
export async function resolvePrompt(args: RunArgs, cwd: string, host: CliHost, warn: (message: string) => void = () => undefined): Promise<string> {
  const fromArgs = (args.prompt ?? []).join(' ').trim();
  if (fromArgs.length > 0 && args.file !== undefined) {
    throw new InvalidInputError('prompt_ambiguous', 'give the prompt as arguments or with --file, not both');
  }
  let prompt = fromArgs;
  if (args.file !== undefined) {
    if (args.file === '-') prompt = await readAllStdin(host.stdin);
    else {
      try {
        prompt = promptText(readFileSync(resolve(cwd, args.file)), `--file ${args.file}`);
      } catch (err) {
        if (err instanceof InvalidInputError) throw err;
        throw new InvalidInputError('prompt_file_unreadable', `--file ${args.file}: cannot read it (${describeError(err)})`);
      }
    }
  } else if (prompt.length === 0 && host.stdin.isTTY !== true) {
    prompt = await readAllStdin(host.stdin);
  } else if (prompt.length > 0) {
    const kind = host.stdinKind();
    if (kind !== 'none') {
      const grace = stdinGraceMs(host.env);
      const material = kind === 'file' ? await readAllStdin(host.stdin) : await readStdinWithGrace(host.stdin, grace);
      if (material === null) warn(`stdin: nothing arrived within ${grace} ms; running on the prompt argument alone (pipe the input in, or use </dev/null)`);
      else if (material.trim().length > 0) prompt = combinePrompt(prompt, material);
    }
  }
  if (prompt.trim().length === 0) {
    throw new InvalidInputError('prompt_missing', 'no prompt: pass it as arguments, with --file FILE, or on stdin');
  }
  return prompt;
}

function outcomeMessage(reason: StopReason, iterations: number, sessionId: string, error: string | undefined): string | null {
  switch (reason) {
    case 'truncated':
      return `${error ?? 'the answer was cut off at the output limit'}; continue with: navi run --session ${sessionId} "continue"`;
    case 'model_error':
      return error ?? 'the model gave no usable answer';
    case 'completed':
      return null;
    case 'max_iterations':
      return `stopped after ${iterations} tool-loop iterations (max_iterations); continue with: navi run --session ${sessionId} "continue"`;
    case 'interrupted':
      return `interrupted; everything so far is saved in session ${sessionId}`;
    case 'context_too_large':
      return error ?? 'the conversation no longer fits the model context window (num_ctx)';
  }
}

/** The result of a run stopped by `--timeout`: budget exhausted (exit 5), resumable with --session. */
async function timedOut(output: Output, outcome: TurnOutcome, ctx: { started: number; sessionId: string; limit: string }): Promise<number> {
  await output.result(
    turnResult(outcome, ctx.started, {
      status: 'budget_exhausted',
      reason: 'timeout',
      errors: [`stopped at --timeout ${ctx.limit}; everything so far is saved in session ${ctx.sessionId}; continue with: navi run --session ${ctx.sessionId} "continue"`],
    }),
  );
  return EXIT.budget_exhausted;
}

/**
 * Text mode with `--output-schema`: stdout gets the JSON answer alone (scripts parse it), not
 * the prose answer that came before it; everything else renders as usual.
 */
function structuredTextView(output: Output): (ev: AgentEvent) => void {
  return (ev) => {
    if (ev.type === 'text_delta' && ev.is_subagent !== true) return;
    if (ev.type === 'stream_end' && ev.is_subagent !== true && ev.stop_reason === 'completed') output.event({ type: 'text_delta', text: ev.text });
    output.event(ev);
  };
}

/**
 * The run asks for loop mode instead (`loopEntry`). Its signal handlers stay installed until
 * `release`, which the dispatcher calls once loop mode is loaded and just before loop mode
 * installs its own, with no await between: there is no moment without a handler.
 */
export interface LoopHandover {
  /** The prompt this run read (arguments, --file or stdin): it becomes the loop's task. */
  prompt: string;
  /** Why loop mode was entered (said on stderr and in a `warning` event). */
  autoEntered: string;
  release: () => void;
}

/**
 * The session a failed run's result may name: only a stored one. A new session whose model
 * never answered (Ollama unreachable, model not pulled) is not stored: its id named nothing.
 */
async function storedSession(rt: Runtime | null, sessionId: string): Promise<string> {
  if (rt === null || sessionId === '') return '';
  const lookup = (async () => {
    try {
      return (await (await rt.store).sessions.get(sessionId)) ? sessionId : '';
    } catch {
      return '';
    }
  })();
  // Bounded: a database that does not answer must not hold the failure's result back.
  let timer: NodeJS.Timeout | undefined;
  const unknown = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(''), STORED_SESSION_CHECK_MS);
    timer.unref();
  });
  try {
    return await Promise.race([lookup, unknown]);
  } finally {
    clearTimeout(timer);
  }
}

/** How long a failed run looks for its session before naming none. */
const STORED_SESSION_CHECK_MS = 2_000;

/** `navi run`, as far as one shot goes: an exit code, or the handover to loop mode. */
export async function runOneShot(argv: GlobalArgs & Record<string, unknown>, host: CliHost): Promise<number | LoopHandover> {
  const args = argv as RunArgs;
  return withAgentCommand<LoopHandover>(
    args,
    host,
    {
      stopping: 'stopping…',
      forcedExit: () => ({ message: 'stopped at once by a second SIGINT; what was saved before it is kept' }),
    },
    async ({ output, stop, started, ids, onClose, detach, settle }) => {
      ids.sessionId = args.session ?? '';
      if (args.maxIterations !== undefined && (!Number.isInteger(args.maxIterations) || args.maxIterations < 1)) {
        throw new InvalidInputError('flag_invalid', `--max-iterations must be a positive integer (got ${String(args.maxIterations)})`);
      }
      checkFlagCombinations(args);
      const limitMs = timeoutMs(args);
      // Counted from the start: reading stdin and opening the store are part of the run.
      const deadline = limitMs === undefined ? null : AbortSignal.timeout(Math.max(1, limitMs - (Date.now() - started)));
      // The prompt first: a run without one must not create or open a database.
      const cwd = resolveCwd(args.cwd, host.cwd);
      const prompt = await resolvePrompt(args, cwd, host, (m) => {
        if (!args.quiet) output.diagnostic(`warning: ${m}`);
      });
      const outputSchema = args.outputSchema !== undefined ? await loadOutputSchema(args.outputSchema, cwd) : undefined;
      if (args.outputLastMessage !== undefined) checkLastMessageTarget(args.outputLastMessage, cwd);
      const toolFilter = toolFilterFrom(args);
      // Read once: it decides loop entry and is the one-shot run's configuration.
      const loaded = configFor(args, cwd, host.env);
      const entering = await loopEntry(args, prompt, loaded.config.loop_mode.enabled, host.env);
      // Loop mode takes over this run's output and handlers (dispatch.ts releases them).
      if (entering !== null) return { prompt, autoEntered: entering, release: detach().release };
      if (!args.quiet) for (const w of loaded.warnings) output.diagnostic(`warning: ${w}`);
      const rt = await createRuntime(args, host, output, { base: { host, cwd, config: loaded.config, explicit: loaded.explicit, output } });
      onClose(() => Promise.all([rt.store.then((s) => s.close()), rt.mcp?.close()]));
      ids.storedSession = () => storedSession(rt, ids.sessionId);
      let sessionId = ids.sessionId;
      let profileId = args.profile ?? rt.config.default_profile;
      if (args.continue === true) sessionId = ids.sessionId = await latestSessionIn(await rt.store, cwd);
      const newSession = args.session === undefined && args.continue !== true;
      if (!newSession) {
        const existing = await (await rt.store).sessions.get(sessionId);
        if (!existing) throw new InvalidInputError('session_not_found', `no session '${sessionId}'; see: navi sessions list`);
        if (args.profile === undefined) profileId = existing.profile;
      } else {
        sessionId = ids.sessionId = randomUUID();
      }
      const profile = resolveProfile(rt, profileId);
      if (toolFilter !== undefined) checkToolFilter(toolFilter, profileId, toolsForProfile(profile, (n) => rt.registry.has(n), false, rt.userTools));
      output.setSession(sessionId);
      reportMcpWarnings(rt.mcp, output);

      const events = rt.agent.runStream({
        ...turnBase(rt, deadline === null ? stop.signal : AbortSignal.any([stop.signal, deadline])),
        sessionId,
        newSession,
        message: prompt,
        profileId,
        maxIterations: args.maxIterations,
        ...(toolFilter !== undefined ? { toolFilter } : {}),
        ...(outputSchema !== undefined ? { outputSchema } : {}),
      });
      const show = outputSchema !== undefined && output.mode === 'text' ? structuredTextView(output) : (ev: AgentEvent) => output.event(ev);
      let outcome;
      for (;;) {
        const step = await events.next();
        if (step.done) {
          outcome = step.value;
          break;
        }
        show(step.value);
      }
      // A replay that mismatched (even where the agent carried on) or left model calls unused: exit 2.
      settle(rt.exchanges, deadline);
      if (outcome.stopReason === 'interrupted' && !stop.signal.aborted && deadline?.aborted === true) {
        // --timeout: the run's budget of time is spent (exit 5, as a loop's --deadline); the work so far is saved.
        return timedOut(output, outcome, { started, sessionId, limit: String(args.timeout) });
      }
      const unwritten = args.outputLastMessage !== undefined ? writeLastMessage(args.outputLastMessage, cwd, outcome.text) : null;
      // The answer is there, but a script waiting for the file would not find it: not a success.
      const status = unwritten !== null && TURN_EXIT_STATUS[outcome.stopReason] === 'success' ? 'error' : TURN_EXIT_STATUS[outcome.stopReason];
      const message = unwritten ?? outcomeMessage(outcome.stopReason, outcome.iterations, sessionId, outcome.error);
      await output.result(
        turnResult(outcome, started, {
          status,
          reason: outcome.schemaErrors !== undefined ? 'output_schema_mismatch' : outcome.stopReason,
          errors: message === null ? [] : [message],
          ...(outcome.structured !== undefined ? { structured: outcome.structured } : {}),
        }),
      );
      return EXIT[status];
    },
  );
}
