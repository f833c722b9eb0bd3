/**
 * `navi loop <task.yaml | "free text">` and `navi loop --resume RUN` (SPEC §3, §6, §7): builds
 * the run's task, configuration, decision source and budgets, drives the loop runner, renders
 * its events and maps how it ended to the exit code (0 completed, 3 incomplete, 4 aborted,
 * 5 budget exhausted, 130 interrupted). Also entered from `navi run` (trigger phrase or
 * `loop_mode.enabled`); a task that asks for one shot is handed back to `dispatch.ts`, which
 * runs it as `navi run` would.
 */
import { hostname } from 'node:os';
import { parseDuration, tryParseDuration } from '../../config/duration.js';
import type { LoopOverride } from '../../config/load.js';
import type { NotifyTargetConfig } from '../../config/notify-schema.js';
import { describeError, InvalidInputError, isNaviError, printable } from '../../errors.js';
import { headlessDecisions, type DecisionSource } from '../../loop/decisions.js';
import { LOOP_ENV } from '../../loop/nesting.js';
import { pidAlive } from '../../loop/ownership.js';
import { planResume } from '../../loop/resume.js';
import { runConfigOf, runTaskOf } from '../../loop/run-state.js';
import { currentOwner, DEFAULT_ITERATION_TIMEOUT_MS, runLoop, type LoopOutcome, type LoopRunOptions } from '../../loop/runner.js';
import { loopResult } from '../../loop/result-event.js';
import { loadTaskFile, promptOnlyTask, taskLoopOverride, taskSandboxOverride, type Task } from '../../loop/task-file.js';
import { loopNotifier, notifyTargetsFor } from '../loop-notify.js';
import type { NaviConfig } from '../../config/schema.js';
import type { Store } from '../../store/types.js';
import type { GlobalArgs } from '../global-args.js';
import { fileDecisions, stdinDecisions, terminalDecisions } from '../loop-decisions.js';
import { createLoopRuntime, isInteractive, loadLoopConfig } from '../loop-runtime.js';
import { reportMcpWarnings } from '../mcp-runtime.js';
import type { McpManager } from '../../mcp/mcp-manager.js';
import type { Output } from '../output.js';
import { reportFailure, resolveProfile, turnBase, type Runtime } from '../runtime.js';
import { configFor, openConfiguredStore, createOutput, resolveCwd } from '../setup.js';
import { withAgentCommand } from '../command-lifecycle.js';
import { loopReports, type LoopReports } from '../loop-reports.js';
import { findTaskFile, looksLikePath, taskNotFound } from '../task-lookup.js';

export { LOOP_ENV };

export interface LoopArgs extends GlobalArgs {
  task?: string[];
  maxIterations?: number;
  approval?: 'none' | 'strict' | 'periodic';
  neverPause?: boolean;
  strategy?: 'combine' | 'radical' | 'reread';
  decisions?: string;
  resume?: string;
  extend?: number;
  /** `--clarify TEXT` (with --resume): a clarification for the model. */
  clarify?: string;
  maxTokens?: number;
  deadline?: string;
  iterationTimeout?: string;
  /** `--junit FILE` / `--summary FILE` (loop-reports.ts). */
  junit?: string;
  summary?: string;
  /** `--notify URL` (repeatable: a list when given more than once). */
  notify?: string | string[];
}

/** How `navi run` hands over: the prompt it read and why it entered loop mode. */
export interface LoopEntry {
  prompt?: string;
  /** Said on stderr and in a `warning` event. */
  autoEntered?: string;
}

/**
 * The task as the run stores it: with the sandbox it runs in, so that `--resume` runs there too
 * (a sandbox from `--sandbox` or the config is not in the task file). `--sandbox` on the resume
 * still overrides it.
 */
function withEffectiveSandbox(t: Task, sandbox: NaviConfig['sandbox']): Task {
  return sandbox.mode === 'off' ? t : { ...t, sandbox: { ...sandbox } };
}

function positiveInt(value: number | undefined, flag: string): void {
  if (value !== undefined && (!Number.isInteger(value) || value < 1)) {
    throw new InvalidInputError('flag_invalid', `${flag} must be a positive whole number (got ${String(value)})`);
  }
}

function checkFlags(args: LoopArgs, entry: LoopEntry): void {
  positiveInt(args.maxIterations, '--max-iterations');
  positiveInt(args.maxTokens, '--max-tokens');
  positiveInt(args.extend, '--extend');
  if (args.deadline !== undefined) parseDuration(args.deadline, '--deadline');
  if (args.iterationTimeout !== undefined) parseDuration(args.iterationTimeout, '--iteration-timeout');
  const nested = process.env[LOOP_ENV];
  if (nested) throw new InvalidInputError('loop_nested', `loops never nest: this navi runs inside loop run ${nested}; do the work directly instead`);
  if (args.resume !== undefined) {
    if ((args.task ?? []).length > 0 || entry.prompt !== undefined) throw new InvalidInputError('flag_invalid', 'give a task or --resume RUN_ID, not both');
    const fresh = (['maxIterations', 'approval', 'neverPause', 'strategy'] as const).filter((k) => args[k] !== undefined);
    if (fresh.length > 0) {
      throw new InvalidInputError('flag_invalid', 'a resumed run keeps its loop settings; --max-iterations, --approval, --never-pause and --strategy apply to new runs (use --extend N for more iterations)');
    }
  } else if (args.extend !== undefined) {
    throw new InvalidInputError('flag_invalid', '--extend only applies with --resume RUN_ID');
  } else if (args.clarify !== undefined) {
    throw new InvalidInputError('flag_invalid', '--clarify only applies with --resume RUN_ID (a new run takes the task itself)');
  }
  if (args.clarify !== undefined && args.clarify.trim() === '') throw new InvalidInputError('flag_invalid', '--clarify: give the clarification text');
}

/**
 * The task (issue 18 item 7): a task file named by path (`.yaml` may be left off) or by the name
 * `navi tasks list` prints; else the words as a free-text prompt. A lone word is never free text
 * (one that names no task is exit 2 with the names near it), nor is a word that looks like a path;
 * words after a task file are exit 2 (the file holds its prompt).
 */
export function resolveTask(words: readonly string[], cwd: string): Task {
  const text = words.join(' ').trim();
  if (text === '') throw new InvalidInputError('task_missing', 'navi loop: give a task file (tasks/fix.yaml), a task name (navi tasks list), or a prompt in quotes, or --resume RUN_ID');
  const first = (words[0] ?? '').trim();
  const oneToken = !/\s/.test(first);
  const file = oneToken ? findTaskFile(first, cwd) : null;
  if (file !== null) {
    if (words.length > 1) {
      throw new InvalidInputError(
        'task_extra_words',
        `extra words after the task file ${first}: '${printable(words.slice(1).join(' '))}'. A task file holds its prompt: put them in it, or quote the whole free-text task (navi loop "…")`,
      );
    }
    return loadTaskFile(file.path, file.display);
  }
  if (oneToken && (words.length === 1 || looksLikePath(first))) throw taskNotFound(first, cwd);
  return promptOnlyTask(text);
}

/** The `navi loop` flags that set loop_mode keys, as the highest loop override. */
function flagOverride(args: LoopArgs): LoopOverride | undefined {
  const values: Record<string, unknown> = {};
  if (args.maxIterations !== undefined) values.max_iterations = args.maxIterations;
  if (args.approval !== undefined) values.iteration_approval = args.approval;
  if (args.neverPause !== undefined) values.never_pause_on_stagnation = args.neverPause;
  if (args.strategy !== undefined) values.stagnation_diversify_strategy = args.strategy;
  return Object.keys(values).length === 0 ? undefined : { source: 'command line', key: 'loop_mode', values };
}

function decisionSource(args: LoopArgs, cwd: string, interactive: boolean, output: Output): DecisionSource {
  // yargs hands `--decisions -` over as an empty string.
  if (args.decisions === '-' || args.decisions === '') return stdinDecisions();
  if (args.decisions !== undefined) return fileDecisions(args.decisions, cwd);
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
export async function runLoopMode(args: LoopArgs, entry: LoopEntry): Promise<number | OneShotHandover> {
  const started = Date.now();
  let baseCwd: string;
  let task: Task | undefined;
  let reports: LoopReports | undefined;
  try {
    checkFlags(args, entry);
    baseCwd = resolveCwd(args.cwd);
    reports = loopReports(args, baseCwd, process.env);
    if (args.resume === undefined) task = entry.prompt !== undefined ? promptOnlyTask(entry.prompt) : resolveTask(args.task ?? [], baseCwd);
  } catch (err) {
    const code = await reportFailure(createOutput(args), err, { interrupted: false, started, sessionId: '' });
    // An invalid task file still leaves the CI its report, saying why nothing ran.
    await reports?.write({ store: null, runId: undefined, taskName: (args.task ?? []).join(' ') || 'loop', exitCode: code, error: isNaviError(err) ? err.message : describeError(err) });
    return code;
  }
  if (task !== undefined && !task.loopMode) {
    if (!args.quiet) process.stderr.write(`navi: running one-shot (${task.oneShotReason ?? 'loop_mode: false'})\n`);
    return { prompt: task.prompt, cwd: task.cwd ?? args.cwd, profile: args.profile ?? task.profile };
  }
  const reporting = reports;
  let store: Promise<Store> | null = null;
  // The run's MCP servers, stopped however the command ends.
  let mcp: McpManager | null = null;
  return withAgentCommand<never>(
    args,
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
    // The body keeps the indentation it had inside try {}: loop-truth edits it on another branch.
    async ({ output, stop, ids, onClose, settle }) => {
    onClose(() => {
      if (ids.runId !== undefined && process.env[LOOP_ENV] === ids.runId) delete process.env[LOOP_ENV];
      return Promise.all([store === null ? undefined : store.then((s) => s.close()), mcp?.close()]);
    });
    let rt: Runtime;
    const notices: string[] = entry.autoEntered !== undefined ? [entry.autoEntered] : [];
    let opts: Omit<LoopRunOptions, 'turn' | 'signal'>;
    let notifyTargets: NotifyTargetConfig[];
    if (args.resume !== undefined) {
      const env = process.env;
      const base = configFor(args, baseCwd);
      // A resumed run's task keeps no notify targets (they may hold secrets): config and --notify.
      notifyTargets = notifyTargetsFor(base.config, undefined, args.notify, env);
      store = openConfiguredStore(base.config, env);
      const run = await (await store).loopRuns.get(args.resume);
      if (run === null) throw new InvalidInputError('run_not_found', `no loop run '${args.resume}'; see: navi runs list`);
      const now = Date.now();
      const plan = planResume(run, {
        extend: args.extend ?? 0,
        ...(args.clarify !== undefined ? { clarify: args.clarify } : {}),
        ...(args.maxTokens !== undefined ? { maxTokens: args.maxTokens } : {}),
        ...(args.deadline !== undefined ? { deadlineMs: parseDuration(args.deadline, '--deadline') } : {}),
        now,
        me: { pid: process.pid, host: hostname() },
        isAlive: pidAlive,
      });
      if (plan.note !== null) notices.push(plan.note);
      const stored = runConfigOf(run);
      task = runTaskOf(run);
      // The stored task keeps its `sandbox`: a resumed run is sandboxed as it started (--sandbox still overrides).
      const sandboxOverride = taskSandboxOverride(task);
      rt = await createLoopRuntime(args, output, { cwd: run.cwd, loopOverrides: sandboxOverride ? [sandboxOverride] : [], store });
      mcp = rt.mcp;
      const decisions = decisionSource(args, baseCwd, rt.interactive, output);
      requireDecider(stored.loop_mode.iteration_approval, decisions);
      const profileId = args.profile ?? stored.profile;
      resolveProfile(rt, profileId);
      opts = {
        task,
        loop: stored.loop_mode,
        profileId,
        maxTokens: plan.maxTokens,
        deadlineAt: plan.deadlineAt,
        iterationTimeoutMs: args.iterationTimeout !== undefined ? parseDuration(args.iterationTimeout, '--iteration-timeout') : stored.iteration_timeout_s * 1000,
        decisions,
        owner: currentOwner(now),
        resume: { run, extend: args.extend ?? 0, ...(args.clarify !== undefined ? { clarify: args.clarify } : {}) },
      };
    } else {
      const t = task as Task;
      const overrides = [taskLoopOverride(t), taskSandboxOverride(t), flagOverride(args)].filter((o): o is LoopOverride => o !== undefined);
      const cwd = t.cwd ?? baseCwd;
      // Settings and who answers prompts are checked before anything is opened (exit 2, no database).
      const loaded = loadLoopConfig(args, cwd, overrides);
      const loop = loaded.config.loop_mode;
      notifyTargets = notifyTargetsFor(loaded.config, t, args.notify, process.env);
      const decisions = decisionSource(args, baseCwd, isInteractive(process.env), output);
      requireDecider(loop.iteration_approval, decisions);
      rt = await createLoopRuntime(args, output, { cwd, loopOverrides: overrides, loaded });
      mcp = rt.mcp;
      store = rt.store;
      const profileId = args.profile ?? t.profile ?? rt.config.default_profile;
      resolveProfile(rt, profileId);
      const deadlineMs =
        args.deadline !== undefined
          ? parseDuration(args.deadline, '--deadline')
          : (t.deadlineMs ?? (rt.config.budget.deadline !== undefined ? tryParseDuration(rt.config.budget.deadline) : undefined));
      opts = {
        task: withEffectiveSandbox(t, rt.config.sandbox),
        loop,
        profileId,
        maxTokens: args.maxTokens ?? t.maxTokens ?? rt.config.budget.max_tokens ?? null,
        deadlineAt: deadlineMs === undefined ? null : new Date(started + deadlineMs),
        iterationTimeoutMs: args.iterationTimeout !== undefined ? parseDuration(args.iterationTimeout, '--iteration-timeout') : DEFAULT_ITERATION_TIMEOUT_MS,
        decisions,
        owner: currentOwner(started),
      };
    }
    output.setLoopDisplay({ showStatusBlock: opts.loop.show_status_block });
    const runtime = rt;
    const notify = await loopNotifier(notifyTargets, rt.config, process.env);
    const events = runLoop(
      {
        ...opts,
        turn: turnBase(runtime, stop.signal, { loop: true }),
        signal: stop.signal,
        ...notify,
        onOpen: ({ runId, sessionId }) => {
          ids.runId = runId;
          ids.sessionId = sessionId;
          output.setSession(sessionId, runId);
          reportMcpWarnings(runtime.mcp, output);
          // Everything the loop starts inherits it: a navi run from the agent's shell never loops.
          process.env[LOOP_ENV] = runId;
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
