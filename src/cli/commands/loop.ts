/**
 * `navi loop <task.yaml | "free text">` and `navi loop --resume RUN` (SPEC §3, §6, §7): builds
 * the run's task, configuration, decision source and budgets, drives the loop runner, renders
 * its events and maps how it ended to the exit code (0 completed, 3 incomplete, 4 aborted,
 * 5 budget exhausted, 130 interrupted). Also entered from `navi run` (trigger phrase or
 * `loop_mode.enabled`); a task that asks for one shot is handed back to `dispatch.ts`, which
 * runs it as `navi run` would.
 */
import { describeError, InvalidInputError, isNaviError } from '../../errors.js';
import { headlessDecisions, type DecisionSource } from '../../loop/decisions.js';
import { NEW_RUN_ONLY } from '../../loop/loop-request.js';
import { LOOP_ENV } from '../../loop/nesting.js';
import { runLoop, type LoopOutcome } from '../../loop/runner.js';
import { loopResult } from '../../loop/result-event.js';
import { promptOnlyTask, type Task } from '../../loop/task-file.js';
import type { Store } from '../../store/types.js';
import type { CliHost } from '../host.js';
import { checkLoopOptions, loopRequestOf, type LoopFlagArgs } from '../loop-flags.js';
import { fileDecisions, stdinDecisions, terminalDecisions } from '../loop-decisions.js';
import { resolveTask, setUpLoop, setUpResume, type LoopStarter } from '../loop-setup.js';
import { reportMcpWarnings } from '../mcp-runtime.js';
import type { McpManager } from '../../mcp/mcp-manager.js';
import type { Output } from '../output.js';
import { reportFailure, turnBase } from '../runtime.js';
import { createOutput, resolveCwd } from '../setup.js';
import { withAgentCommand } from '../command-lifecycle.js';
import { loopReports, type LoopReports } from '../loop-reports.js';

export { LOOP_ENV };

/** `navi loop`'s flags: a loop request's (loop-flags.ts), and the task, a resume and the reports. */
export interface LoopArgs extends LoopFlagArgs {
  task?: string[];
  resume?: string;
  extend?: number;
  /** `--clarify TEXT` (with --resume): a clarification for the model. */
  clarify?: string;
  /** `--junit FILE` / `--summary FILE` (loop-reports.ts). */
  junit?: string;
  summary?: string;
}

/** How `navi run` hands over: the prompt it read and why it entered loop mode. */
export interface LoopEntry {
  prompt?: string;
  /** Said on stderr and in a `warning` event. */
  autoEntered?: string;
}

function checkFlags(args: LoopArgs, entry: LoopEntry, env: Record<string, string | undefined>): void {
  checkLoopOptions(loopRequestOf(args), 'flags');
  if (args.extend !== undefined && (!Number.isInteger(args.extend) || args.extend < 1)) {
    throw new InvalidInputError('flag_invalid', `--extend must be a positive whole number (got ${String(args.extend)})`);
  }
  const nested = env[LOOP_ENV];
  if (nested) throw new InvalidInputError('loop_nested', `loops never nest: this navi runs inside loop run ${nested}; do the work directly instead`);
  if (args.resume !== undefined) {
    if ((args.task ?? []).length > 0 || entry.prompt !== undefined) throw new InvalidInputError('flag_invalid', 'give a task or --resume RUN_ID, not both');
    const options = loopRequestOf(args);
    if (NEW_RUN_ONLY.some((k) => options[k] !== undefined)) {
      throw new InvalidInputError('flag_invalid', 'a resumed run keeps its loop settings; --max-iterations, --approval, --never-pause and --strategy apply to new runs (use --extend N for more iterations)');
    }
  } else if (args.extend !== undefined) {
    throw new InvalidInputError('flag_invalid', '--extend only applies with --resume RUN_ID');
  } else if (args.clarify !== undefined) {
    throw new InvalidInputError('flag_invalid', '--clarify only applies with --resume RUN_ID (a new run takes the task itself)');
  }
  if (args.clarify !== undefined && args.clarify.trim() === '') throw new InvalidInputError('flag_invalid', '--clarify: give the clarification text');
}

function decisionSource(file: string | undefined, cwd: string, interactive: boolean, output: Output): DecisionSource {
  if (file === '-') return stdinDecisions();
  if (file !== undefined) return fileDecisions(file, cwd);
  return interactive ? terminalDecisions({ echoMenu: output.mode !== 'text' }) : headlessDecisions;
}

function requireDecider(approval: string, source: DecisionSource): void {
  if (approval === 'none' || source.kind !== 'headless') return;
  throw new InvalidInputError(
    'approval_needs_decider',
    `iteration_approval is "${approval}" but nobody can answer: stdin and stderr are not both a terminal (or CI is set). ` +
      'Pass --decisions FILE (or - for stdin) with JSON lines such as {"decision":"continue"}, or use --approval none',
  );
}

/** A task that asks for one shot (`loop_mode: false`, "just do this once"): what `navi run` should run. */
export interface OneShotHandover {
  prompt: string;
  cwd: string | undefined;
  profile: string | undefined;
}

/** Loop mode for `navi loop` and for `navi run` entering it: an exit code, or the handover to one shot. */
export async function runLoopMode(args: LoopArgs, entry: LoopEntry, host: CliHost): Promise<number | OneShotHandover> {
  const started = Date.now();
  let baseCwd: string;
  let task: Task | undefined;
  let reports: LoopReports | undefined;
  try {
    checkFlags(args, entry, host.env);
    baseCwd = resolveCwd(args.cwd, host.cwd);
    reports = loopReports(args, baseCwd, host);
    if (args.resume === undefined) task = entry.prompt !== undefined ? promptOnlyTask(entry.prompt) : resolveTask(args.task ?? [], baseCwd);
  } catch (err) {
    const code = await reportFailure(createOutput(args, host), host.env, err, { interrupted: false, started, sessionId: '' });
    // An invalid task file still leaves the CI its report, saying why nothing ran.
    await reports?.write({ store: null, runId: undefined, taskName: (args.task ?? []).join(' ') || 'loop', exitCode: code, error: isNaviError(err) ? err.message : describeError(err) });
    return code;
  }
  if (task !== undefined && !task.loopMode) {
    if (!args.quiet) host.stderr.write(`navi: running one-shot (${task.oneShotReason ?? 'loop_mode: false'})\n`);
    return { prompt: task.prompt, cwd: task.cwd ?? args.cwd, profile: args.profile ?? task.profile };
  }
  const reporting = reports;
  let store: Promise<Store> | null = null;
  // The run's MCP servers, stopped however the command ends.
  let mcp: McpManager | null = null;
  return withAgentCommand<never>(
    args,
    host,
    {
      stopping: 'saving the run and stopping…',
      forcedExit: (ids) => ({
        message: `stopped at once by a second SIGINT; committed iterations are kept${ids.runId !== undefined ? `; resume with: navi loop --resume ${ids.runId}` : ''}`,
        ...(ids.runId !== undefined ? { extra: { run_id: ids.runId } } : {}),
      }),
      onFailure: async (code, err, { ids }) => {
        const opened = store === null ? null : await store.catch(() => null);
        await reporting.write({ store: opened, runId: ids.runId, taskName: task?.name ?? args.resume ?? 'loop', exitCode: code, error: isNaviError(err) ? err.message : describeError(err) });
      },
    },
    async ({ output, stop, ids, onClose, settle }) => {
      onClose(() => {
        if (ids.runId !== undefined && host.env[LOOP_ENV] === ids.runId) delete host.env[LOOP_ENV];
        return Promise.all([store === null ? undefined : store.then((s) => s.close()), mcp?.close()]);
      });
      const request = loopRequestOf(args);
      const starter: LoopStarter = {
        args,
        output,
        baseCwd,
        host,
        naming: 'flags',
        source: 'command line',
        started,
        decisions: (loop, interactive) => {
          const source = decisionSource(request.decisions, baseCwd, interactive, output);
          requireDecider(loop.iteration_approval, source);
          return source;
        },
      };
      const prepared =
        args.resume !== undefined
          ? await setUpResume({ ...request, run_id: args.resume, ...(args.extend !== undefined ? { extend: args.extend } : {}), ...(args.clarify !== undefined ? { clarify: args.clarify } : {}) }, starter)
          : await setUpLoop(request, task as Task, starter);
      const runtime = prepared.rt;
      store = runtime.store;
      mcp = runtime.mcp;
      task = prepared.options.task;
      const notices: string[] = [...(entry.autoEntered !== undefined ? [entry.autoEntered] : []), ...prepared.notices];
      const opts = prepared.options;
      output.setLoopDisplay({ showStatusBlock: opts.loop.show_status_block });
      const events = runLoop(
        {
          ...opts,
          turn: turnBase(runtime, stop.signal, { loop: true }),
          signal: stop.signal,
          onOpen: ({ runId, sessionId }) => {
            ids.runId = runId;
            ids.sessionId = sessionId;
            output.setSession(sessionId, runId);
            reportMcpWarnings(runtime.mcp, output);
            // Everything the loop starts inherits it: a navi run from the agent's shell never loops.
            host.env[LOOP_ENV] = runId;
          },
        },
        { agent: runtime.agent, store: await store },
      );
      let outcome: LoopOutcome;
      for (;;) {
        const step = await events.next();
        if (step.done) {
          outcome = step.value;
          break;
        }
        output.event(step.value);
        if (step.value.type === 'loop_started') {
          for (const n of notices.splice(0)) {
            if (output.mode === 'stream-json' && !args.quiet) output.diagnostic(`navi: ${n}`);
            output.event({ type: 'warning', code: entry.autoEntered === n ? 'loop_mode_entered' : 'loop_run_taken_over', message: n });
          }
        }
      }
      settle(runtime.exchanges);
      const errors = outcome.message === null ? [] : [outcome.message];
      if (outcome.status !== 'completed' && outcome.status !== 'aborted') errors.push(`resume with: navi loop --resume ${outcome.runId}${outcome.reason === 'max_iterations' ? ' --extend 3' : ''}`);
      if (outcome.status === 'aborted' && outcome.reason !== 'user_aborted') errors.push(`continue it with a clarification: navi loop --resume ${outcome.runId} --clarify "what the model missed"`);
      const result = loopResult(outcome, started, errors);
      await output.result(result);
      await reporting.write({ store: await store, runId: outcome.runId, taskName: task?.name ?? 'loop', exitCode: result.exit_code });
      return result.exit_code;
    },
  );
}
