/**
 * `navi run [prompt..]`: one agent turn with the full tool loop, rendered in the chosen output
 * mode, ending in a `result` and the SPEC §4 exit code — or a handover to loop mode, which
 * `dispatch.ts` follows.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { StopReason } from '../../agent/events.js';
import { describeError, EXIT, InvalidInputError, type ExitStatus } from '../../errors.js';
import type { GlobalArgs } from '../global-args.js';
import { installStopHandlers } from '../os-signals.js';
import { createRuntime, reportFailure, resolveProfile, turnBase, type Runtime } from '../runtime.js';
import { loadLoopConfig } from '../loop-runtime.js';
import { forcedExitResult } from '../output.js';
import { createOutput, resolveCwd } from '../setup.js';

interface RunArgs extends GlobalArgs {
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
async function loopEntry(args: RunArgs, prompt: string, loopModeEnabled: boolean): Promise<string | null> {
  if (args.loop === false || args.session !== undefined) return null;
  const [{ detectLoopTrigger, isJustOnce }, { LOOP_ENV }] = await Promise.all([import('../../loop/triggers.js'), import('../../loop/nesting.js')]);
  if (process.env[LOOP_ENV] || isJustOnce(prompt)) return null;
  const trigger = detectLoopTrigger(prompt);
  if (trigger !== null) return `entering loop mode: the prompt says "${trigger}" (pass --no-loop for one shot)`;
  if (loopModeEnabled) return 'entering loop mode: loop_mode.enabled is true in the configuration (pass --no-loop for one shot)';
  return null;
}

/** Reads all of a non-terminal stdin. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The prompt from arguments, `--file F` (`-` for stdin), or piped stdin. */
export async function resolvePrompt(args: RunArgs, cwd: string): Promise<string> {
  const fromArgs = (args.prompt ?? []).join(' ').trim();
  if (fromArgs.length > 0 && args.file !== undefined) {
    throw new InvalidInputError('prompt_ambiguous', 'give the prompt as arguments or with --file, not both');
  }
  let prompt = fromArgs;
  if (args.file !== undefined) {
    if (args.file === '-') prompt = await readStdin();
    else {
      try {
        prompt = readFileSync(resolve(cwd, args.file), 'utf8');
      } catch (err) {
        throw new InvalidInputError('prompt_file_unreadable', `--file ${args.file}: cannot read it (${describeError(err)})`);
      }
    }
  } else if (prompt.length === 0 && process.stdin.isTTY !== true) {
    prompt = await readStdin();
  }
  if (prompt.trim().length === 0) {
    throw new InvalidInputError('prompt_missing', 'no prompt: pass it as arguments, with --file FILE, or on stdin');
  }
  return prompt;
}

const OUTCOMES: Record<StopReason, ExitStatus> = {
  completed: 'success',
  max_iterations: 'incomplete',
  interrupted: 'interrupted',
  context_too_large: 'error',
  // The answer is there but cut off: not a clean success (SPEC §13), and not a crash.
  truncated: 'incomplete',
  model_error: 'error',
};

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
      return 'the conversation no longer fits the model context window (num_ctx)';
  }
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

/** `navi run`, as far as one shot goes: an exit code, or the handover to loop mode. */
export async function runOneShot(argv: GlobalArgs & Record<string, unknown>): Promise<number | LoopHandover> {
  const args = argv as RunArgs;
  const started = Date.now();
  const output = createOutput(args);
  let rt: Runtime | null = null;
  let sessionId = args.session ?? '';
  let handover: LoopHandover | null = null;
  const stop = installStopHandlers(
    (sig) => {
      if (output.mode === 'text' && !args.quiet) output.diagnostic(`\nnavi: ${sig} received, stopping… (Ctrl-C again to exit at once)`);
    },
    () =>
      output.resultSync(forcedExitResult(started, 'stopped at once by a second SIGINT; what was saved before it is kept')),
  );
  try {
    if (args.maxIterations !== undefined && (!Number.isInteger(args.maxIterations) || args.maxIterations < 1)) {
      throw new InvalidInputError('flag_invalid', `--max-iterations must be a positive integer (got ${String(args.maxIterations)})`);
    }
    // The prompt first: a run without one must not create or open a database.
    const cwd = resolveCwd(args.cwd);
    const prompt = await resolvePrompt(args, cwd);
    // Read once: it decides loop entry and is the one-shot run's configuration.
    const loaded = loadLoopConfig(args, cwd, []);
    const entering = await loopEntry(args, prompt, loaded.config.loop_mode.enabled);
    if (entering !== null) {
      handover = {
        prompt,
        autoEntered: entering,
        release: () => {
          stop.dispose();
          output.close();
        },
      };
      return handover;
    }
    if (!args.quiet) for (const w of loaded.warnings) output.diagnostic(`warning: ${w}`);
    rt = await createRuntime(args, output, { base: { cwd, env: process.env, config: loaded.config, explicit: loaded.explicit, output } });
    let profileId = args.profile ?? rt.config.default_profile;
    const newSession = args.session === undefined;
    if (!newSession) {
      const existing = await (await rt.store).sessions.get(sessionId);
      if (!existing) throw new InvalidInputError('session_not_found', `no session '${sessionId}'; see: navi sessions list`);
      if (args.profile === undefined) profileId = existing.profile;
    } else {
      sessionId = randomUUID();
    }
    resolveProfile(rt, profileId);
    output.setSession(sessionId);

    const events = rt.agent.runStream({
      ...turnBase(rt, stop.signal),
      sessionId,
      newSession,
      message: prompt,
      profileId,
      maxIterations: args.maxIterations,
    });
    let outcome;
    for (;;) {
      const step = await events.next();
      if (step.done) {
        outcome = step.value;
        break;
      }
      output.event(step.value);
    }
    // A replay that mismatched (even where the agent carried on) or left model calls unused: exit 2.
    if (!stop.signal.aborted) rt.exchanges.finish();
    const status = OUTCOMES[outcome.stopReason];
    const message = outcomeMessage(outcome.stopReason, outcome.iterations, sessionId, outcome.error);
    await output.result({
      status,
      reason: outcome.stopReason,
      exit_code: EXIT[status],
      result: outcome.text,
      num_turns: outcome.modelCalls,
      iterations: outcome.iterations,
      usage: { prompt_tokens: outcome.usage.promptTokens, completion_tokens: outcome.usage.completionTokens },
      duration_ms: Date.now() - started,
      errors: message === null ? [] : [message],
    });
    return stop.finish(EXIT[status]);
  } catch (err) {
    return stop.finish(await reportFailure(output, err, { interrupted: stop.signal.aborted, started, sessionId }));
  } finally {
    // A handover closes the output when it releases the handlers.
    if (handover === null) output.close();
    // Every message is saved before the result is written; a signal while closing exits at once.
    if (rt) await rt.store.then((s) => s.close(), () => undefined);
  }
}
