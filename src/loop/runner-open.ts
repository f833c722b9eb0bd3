/**
 * Starting a run: a fresh one gets a new `loop` session and run row (git HEAD recorded, counters
 * at zero — it inherits nothing from earlier runs); a resumed one takes its row over (owner,
 * status `running`, raised limits) and restores its counters from the row and the last
 * committed iteration.
 */
import { randomUUID } from 'node:crypto';
import type { LoopRunRecord } from '../store/types.js';
import type { GitContext } from './collect-evidence.js';
import { createGitProbe } from './git-probe.js';
import { pendingOf, type PendingDecision } from './pending-decision.js';
import { clarificationNote } from './iteration-message.js';
import { freshState, restoreState, type LoopState, type RunConfigRecord } from './run-state.js';
import type { LoopDeps, LoopRunOptions } from './runner-types.js';
import type { Task } from './task-file.js';

/** An open run: its row, counters and git context. */
export interface OpenRun {
  run: LoopRunRecord;
  state: LoopState;
  git: GitContext;
  resumed: boolean;
  /** When the run first started (markers written since count as this run's). */
  startedAt: Date;
  /** A resumed run's last iteration, committed before its question was answered: asked again first. */
  pending: PendingDecision | null;
}

function configRecord(opts: LoopRunOptions): RunConfigRecord {
  return {
    loop_mode: opts.loop,
    profile: opts.profileId,
    iteration_timeout_s: Math.round(opts.iterationTimeoutMs / 1000),
    owner: opts.owner,
  };
}

/** Creates or resumes the run described by `opts`. */
export async function openRun(opts: LoopRunOptions, deps: LoopDeps, runId?: string): Promise<OpenRun> {
  // Located now, before the model runs anything; every later question names that repository.
  const probe = deps.git ?? createGitProbe();
  const cwd = opts.turn.cwd;
  const repo = await probe.isRepo(cwd);
  const { store } = deps;
  if (opts.resume !== undefined) {
    const prior = opts.resume.run;
    const clarify = opts.resume.clarify?.trim();
    const run = await store.loopRuns.update(prior.id, {
      status: 'running',
      reason: null,
      // A run stopped as stuck starts its stagnation count over with the clarification.
      ...(prior.status === 'aborted' && clarify !== undefined ? { hashHistory: [], stagnationCount: 0, diversifications: 0 } : {}),
      maxIterations: opts.resume.run.maxIterations + opts.resume.extend,
      maxTokens: opts.maxTokens,
      deadlineAt: opts.deadlineAt,
      config: configRecord(opts),
      finishedAt: null,
    });
    const iterations = await store.loopRuns.listIterations(run.id);
    const last = iterations[iterations.length - 1];
    const state = restoreState(run, last);
    const pending = last === undefined ? null : pendingOf(last.decision);
    if (pending !== null) state.previousHash = pending.previous_hash;
    if (clarify !== undefined && clarify !== '') state.notes.push(clarificationNote(clarify));
    return { run, state, git: { probe, repo, startHead: run.gitHeadAtStart }, resumed: true, startedAt: run.startedAt, pending };
  }
  const startHead = repo ? await probe.head(cwd) : null;
  const sessionId = randomUUID();
  await store.sessions.create({
    id: sessionId,
    kind: 'loop',
    profile: opts.profileId,
    cwd,
    title: opts.task.prompt.split('\n').find((l) => l.trim() !== '')?.trim().slice(0, 200) ?? opts.task.name,
    model: opts.turn.model,
  });
  const run = await store.loopRuns.create({
    ...(runId !== undefined ? { id: runId } : {}),
    sessionId,
    taskName: opts.task.name,
    // Notify URLs may hold a webhook's secret: never stored (task-file.ts).
    task: withoutNotify(opts.task),
    config: configRecord(opts),
    cwd,
    maxIterations: opts.loop.max_iterations,
    maxTokens: opts.maxTokens,
    deadlineAt: opts.deadlineAt,
    gitHeadAtStart: startHead,
  });
  return { run, state: freshState(run.maxIterations), git: { probe, repo, startHead }, resumed: false, startedAt: run.startedAt, pending: null };
}

/** The task as stored: without its notify targets. */
function withoutNotify(task: Task): Task {
  const copy = { ...task };
  delete copy.notify;
  return copy;
}
