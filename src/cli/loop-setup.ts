/**
 * The one loop set-up (issue 35): a loop request (src/loop/loop-request.ts) becomes the runtime
 * and runner options of a started loop — for `navi loop` (new and `--resume`), for `navi serve`'s
 * `POST /runs`, and so for the worker's jobs (a worker runs `navi loop`). The task, the loop
 * overrides in their order (task file < request), the configuration, who answers prompts,
 * budgets, notify targets and the sandbox the run stores are decided here and nowhere else.
 */
import { hostname } from 'node:os';
import { tryParseDuration } from '../config/duration.js';
import type { LoopOverride } from '../config/load.js';
import type { LoopModeConfig, NaviConfig } from '../config/schema.js';
import { InvalidInputError, printable } from '../errors.js';
import type { DecisionSource } from '../loop/decisions.js';
import { loopModeValues, type LoopOptions, type LoopRequest, type LoopResumeRequest } from '../loop/loop-request.js';
import { pidAlive } from '../loop/ownership.js';
import { planResume } from '../loop/resume.js';
import { runConfigOf, runTaskOf } from '../loop/run-state.js';
import { currentOwner, DEFAULT_ITERATION_TIMEOUT_MS, type LoopRunOptions } from '../loop/runner.js';
import { loadTaskFile, promptOnlyTask, taskLoopOverride, taskSandboxOverride, type Task } from '../loop/task-file.js';
import type { Store } from '../store/types.js';
import type { GlobalArgs } from './global-args.js';
import { createLoopRuntime, loadLoopConfig } from './loop-runtime.js';
import { checkLoopOptions, durationOf, type RequestNaming } from './loop-flags.js';
import { loopNotifier, notifyTargetsFor } from './loop-notify.js';
import type { Output } from './output.js';
import { isInteractive, resolveProfile, type Runtime } from './runtime.js';
import { configFor, openConfiguredStore } from './setup.js';
import type { CliHost } from './host.js';
import { findTaskFile, looksLikePath, taskNotFound } from './task-lookup.js';

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

/**
 * The task as the run stores it: with the sandbox it runs in, so that `--resume` runs there too
 * whoever started it (a sandbox from `--sandbox`, `navi serve --sandbox` or the config is not in
 * the task file). `--sandbox` on the resume still overrides it.
 */
export function withEffectiveSandbox(t: Task, sandbox: NaviConfig['sandbox']): Task {
  if (sandbox.mode === 'off') {
    if (t.sandbox === undefined) return t;
    const { sandbox: _dropped, ...rest } = t;
    return rest;
  }
  // Mode and network only: the environment policy (`sandbox.env`) is the config's, never a task's
  // (a task file may not set it), and a resume reads it from the config it runs with.
  return { ...t, sandbox: { mode: sandbox.mode, network: sandbox.network } };
}

/** Who starts the loop, and what it brings besides the request. */
export interface LoopStarter {
  /** The global flags of the process that starts it (config file, db, host; model, profile and sandbox unless the request names its own). */
  args: GlobalArgs;
  output: Output;
  /** The directory the task is found from (a task's `cwd` is relative to its file). */
  baseCwd: string;
  /** The process that starts it (`navi loop`'s, `navi serve`'s): environment and streams. */
  host: CliHost;
  naming: RequestNaming;
  /** Where the overrides of the request are said to come from in config messages. */
  source: string;
  /** An open store to run on (`navi serve`'s); else the configured one is opened. */
  store?: Promise<Store>;
  /** false: nobody answers prompts on this terminal (`navi serve`). */
  interactive?: boolean;
  /** Who answers the run's prompts, given its loop settings; called before anything is opened (a refusal is exit 2). */
  decisions: (loop: LoopModeConfig, interactive: boolean) => DecisionSource;
  /** The address of the `navi serve` that starts it, linked from notifications. */
  serverBase?: string;
  /** When the start was asked for: the deadline counts from here. */
  started: number;
}

/** A loop ready to run: its runtime (close its MCP servers and store when done) and the runner's options. */
export interface PreparedLoop {
  rt: Runtime;
  options: Omit<LoopRunOptions, 'turn' | 'signal' | 'onOpen'>;
  /** Said once the run has started (a taken-over run). */
  notices: string[];
}

/** The global flags as this request runs them: its model and sandbox over the starter's. */
function argsFor(args: GlobalArgs, req: Pick<LoopOptions, 'model' | 'sandbox'>): GlobalArgs {
  return { ...args, ...(req.model !== undefined ? { model: req.model } : {}), ...(req.sandbox !== undefined ? { sandbox: req.sandbox } : {}) };
}

/**
 * A new run of `task` (already resolved from `req.task`, so a one-shot task is handed over before
 * anything runs): the configuration with the task's and the request's loop settings, who
 * answers, then the runtime and profile, budgets and notify targets.
 */
export async function setUpLoop(req: Omit<LoopRequest, 'task'>, task: Task, s: LoopStarter): Promise<PreparedLoop> {
  checkLoopOptions(req, s.naming);
  const args = argsFor(s.args, req);
  const values = loopModeValues(req);
  const requested: LoopOverride | undefined = Object.keys(values).length === 0 ? undefined : { source: s.source, key: 'loop_mode', values };
  // The task file's sandbox above the config's, the request's (`--sandbox`, a flag) above both.
  const overrides = [taskLoopOverride(task), taskSandboxOverride(task), requested].filter((o): o is LoopOverride => o !== undefined);
  const cwd = task.cwd ?? s.baseCwd;
  // Settings, notify targets and who answers prompts are checked before anything is opened (exit 2, no database).
  const loaded = loadLoopConfig(args, cwd, s.host.env, overrides);
  const loop = loaded.config.loop_mode;
  const notifyTargets = notifyTargetsFor(loaded.config, task, req.notify, s.host.env);
  const decisions = s.decisions(loop, s.interactive ?? isInteractive(s.host));
  const rt = await createLoopRuntime(args, s.host, s.output, {
    cwd,
    loopOverrides: overrides,
    loaded,
    ...(s.store !== undefined ? { store: s.store } : {}),
    ...(s.interactive === false ? { interactive: false } : {}),
  });
  try {
    const profileId = req.profile ?? task.profile ?? rt.config.default_profile;
    resolveProfile(rt, profileId);
    const deadlineMs = durationOf(req, 'deadline', s.naming) ?? task.deadlineMs ?? (rt.config.budget.deadline !== undefined ? tryParseDuration(rt.config.budget.deadline) : undefined);
    return {
      rt,
      notices: [],
      options: {
        task: withEffectiveSandbox(task, rt.config.sandbox),
        loop,
        profileId,
        maxTokens: req.max_tokens ?? task.maxTokens ?? rt.config.budget.max_tokens ?? null,
        deadlineAt: deadlineMs === undefined ? null : new Date(s.started + deadlineMs),
        iterationTimeoutMs: durationOf(req, 'iteration_timeout', s.naming) ?? DEFAULT_ITERATION_TIMEOUT_MS,
        decisions,
        owner: currentOwner(s.started),
        ...(await loopNotifier(notifyTargets, rt.config, s.host.env, s.serverBase)),
      },
    };
  } catch (err) {
    await release(rt, s.store === undefined ? rt.store : undefined);
    throw err;
  }
}

/** What a set-up that failed had opened: the runtime's MCP servers, and the store unless the starter lent it. */
async function release(rt: Runtime | undefined, ownStore: Promise<Store> | undefined): Promise<void> {
  await Promise.all([rt?.mcp?.close(), ownStore?.then((st) => st.close())]).catch(() => undefined);
}

/** A stored run continued (`navi loop --resume`): its task, settings and sandbox as stored, what the request may change. */
export async function setUpResume(req: LoopResumeRequest, s: LoopStarter): Promise<PreparedLoop> {
  checkLoopOptions(req, s.naming);
  const args = argsFor(s.args, req);
  const base = configFor(args, s.baseCwd, s.host.env);
  // A resumed run's task keeps no notify targets (they may hold secrets): config and --notify.
  const notifyTargets = notifyTargetsFor(base.config, undefined, req.notify, s.host.env);
  const store = s.store ?? openConfiguredStore(base.config, s.host);
  const ownStore = s.store === undefined ? store : undefined;
  let rt: Runtime | undefined;
  try {
    const run = await (await store).loopRuns.get(req.run_id);
    if (run === null) throw new InvalidInputError('run_not_found', `no loop run '${req.run_id}'; see: navi runs list`);
    const now = s.started;
    const deadlineMs = durationOf(req, 'deadline', s.naming);
    const plan = planResume(run, {
      extend: req.extend ?? 0,
      ...(req.clarify !== undefined ? { clarify: req.clarify } : {}),
      ...(req.max_tokens !== undefined ? { maxTokens: req.max_tokens } : {}),
      ...(deadlineMs !== undefined ? { deadlineMs } : {}),
      now,
      me: { pid: process.pid, host: hostname() },
      isAlive: pidAlive,
    });
    const stored = runConfigOf(run);
    const task = runTaskOf(run);
    // The stored task keeps its `sandbox`: a resumed run is sandboxed as it started (--sandbox still overrides).
    const sandboxOverride = taskSandboxOverride(task);
    rt = await createLoopRuntime(args, s.host, s.output, { cwd: run.cwd, loopOverrides: sandboxOverride ? [sandboxOverride] : [], store });
    const decisions = s.decisions(stored.loop_mode, rt.interactive);
    const profileId = req.profile ?? stored.profile;
    resolveProfile(rt, profileId);
    return {
      rt,
      notices: plan.note !== null ? [plan.note] : [],
      options: {
        task: withEffectiveSandbox(task, rt.config.sandbox),
        loop: stored.loop_mode,
        profileId,
        maxTokens: plan.maxTokens,
        deadlineAt: plan.deadlineAt,
        iterationTimeoutMs: durationOf(req, 'iteration_timeout', s.naming) ?? stored.iteration_timeout_s * 1000,
        decisions,
        owner: currentOwner(now),
        resume: { run, extend: req.extend ?? 0, ...(req.clarify !== undefined ? { clarify: req.clarify } : {}) },
        ...(await loopNotifier(notifyTargets, rt.config, s.host.env, s.serverBase)),
      },
    };
  } catch (err) {
    await release(rt, ownStore);
    throw err;
  }
}
