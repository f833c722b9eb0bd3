/**
 * The loop runner (SPEC §7): owns the loop in code and in the database. Each iteration: the
 * iteration message, one agent turn in the run's session, evidence (tool calls, git, checks,
 * ticket), indicators, exit signal, phase, state hash, NAVIGATOR_STATUS, then the approval gate,
 * the exit gate, stagnation and max iterations — and the iteration is committed to the database
 * (with every decision taken) before the next one starts. Budgets (tokens, deadline, per-iteration
 * timeout) and SIGINT/SIGTERM end the run resumable; a half-done iteration is never committed,
 * so a resumed run redoes it.
 *
 * One deliberate ordering beyond seed 004: an iteration that passes the exit gate ends the loop
 * before stagnation is looked at — a finished task that happens to repeat the previous state is
 * done, not stuck.
 */
import { performance } from 'node:perf_hooks';
import type { AgentEvent } from '../agent/events.js';
import { isNaviError, StorageError } from '../errors.js';
import { cannotRunWarning, runChecks, runTicket } from './checks.js';
import { collectEvidence, evidenceRecord, observeTree, withChecks, type TreeState } from './collect-evidence.js';
import { evaluateIteration } from './evaluate.js';
import type { Evidence } from './evidence.js';
import { buildIterationMessage } from './iteration-message.js';
import { startHeartbeat } from './ownership.js';
import { IterationDecider } from './runner-decide.js';
import { endingIndicators, endingMarker, isResumable, loopCompleteEvent, type EndContext, type Ending } from './runner-end.js';
import { gateEvent, interrupted, statusEvent, stopEnding, turnEnding } from './runner-events.js';
import { withNotifications } from './notify-hook.js';
import { openRun, type OpenRun } from './runner-open.js';
import { runIterationTurn } from './runner-turn.js';
import type { BookkeepingPhase, LoopDeps, LoopOutcome, LoopRunOptions } from './runner-types.js';
import type { ExitSignal } from './exit-signal.js';
import { consecutiveCount } from './stagnation.js';
import { newRunId } from '../store/ids.js';
import { acquireTreeLock } from './tree-lock.js';
import { AWAITING_DECISION, awaitingDecision, pendingRecord, type IterationRow, type PendingDecision } from './pending-decision.js';
import type { Evaluation } from './evaluate.js';
import type { LoopRunPatch } from '../store/types.js';

export { currentOwner } from './runner-events.js';
export type { LoopDeps, LoopOutcome, LoopRunOptions } from './runner-types.js';

/** Default time one iteration's agent turn may take: a long local-model turn, not a hung one. */
export const DEFAULT_ITERATION_TIMEOUT_MS = 30 * 60 * 1000;

type Events<T> = AsyncGenerator<AgentEvent, T>;

/** Runs (or resumes) a loop: yields every event, returns how it ended. */
export async function* runLoop(opts: LoopRunOptions, deps: LoopDeps): Events<LoopOutcome> {
  const runId = opts.resume?.run.id ?? newRunId();
  const n = opts.notifier;
  if (n === undefined || !n.active) return yield* driveLoop(opts, deps, runId);
  return yield* withNotifications(driveLoop(opts, deps, runId), n, { runId, task: opts.task, pageUrl: opts.pageUrl, now: deps.now ?? Date.now, graceMs: opts.notifyGraceMs });
}

async function* driveLoop(opts: LoopRunOptions, deps: LoopDeps, runId: string): Events<LoopOutcome> {
  // One loop per working tree, refused before anything is stored (tree-lock.ts).
  const lock = await acquireTreeLock(opts.turn.cwd, runId);
  try {
    const open = await openRun(opts, deps, runId);
    opts.onOpen?.({ runId: open.run.id, sessionId: open.run.sessionId });
    const runner = new LoopRunner(opts, deps, open);
    return yield* runner.run(lock.note);
  } finally {
    lock.release();
  }
}

class LoopRunner {
  private readonly now: () => number;
  private modelCalls = 0;
  private finalText = '';
  private lastEvidence: Evidence | null = null;
  private lastSignal: ExitSignal | null = null;
  /**
   * The tree as the last iteration's evidence saw it, when nothing can have touched it since
   * (no checks or ticket ran, nobody at a terminal): the next iteration starts from it instead
   * of asking git again.
   */
  private treeAfterLast: TreeState | null = null;
  /** Checks already reported as unable to run (said once, when first seen). */
  private readonly warnedChecks = new Set<string>();

  constructor(
    private readonly opts: LoopRunOptions,
    private readonly deps: LoopDeps,
    private readonly open: OpenRun,
  ) {
    this.now = deps.now ?? Date.now;
  }

  private get state() {
    return this.open.state;
  }

  private get runId(): string {
    return this.open.run.id;
  }

  private get cwd(): string {
    return this.opts.turn.cwd;
  }

  private tag<T extends AgentEvent>(ev: T, n: number): T {
    return { ...ev, iteration: n, loop_iteration: n };
  }

  /** Times `work` as one bookkeeping phase (when a timing sink is set). */
  private async timed<T>(phase: BookkeepingPhase, work: () => Promise<T>): Promise<T> {
    const sink = this.deps.timing;
    if (sink === undefined) return work();
    const t = performance.now();
    try {
      return await work();
    } finally {
      sink(phase, performance.now() - t);
    }
  }

  async *run(lockNote: string | null = null): Events<LoopOutcome> {
    const heartbeat = startHeartbeat(() => this.deps.store.loopRuns.update(this.runId, {}));
    try {
      yield this.startedEvent();
      if (lockNote !== null) yield { type: 'warning', code: 'loop_lock_taken_over', message: lockNote };
      const pending = this.open.pending;
      if (pending !== null) {
        const n = this.state.iteration;
        yield { type: 'warning', code: 'decision_pending', message: `iteration ${n} was saved before its question was answered; asking again (it is not redone)` };
        const outcome = yield* this.conclude(n, pending, null, null);
        if (outcome !== null) return outcome;
      }
      for (;;) {
        const budget = this.budgetEnding();
        if (budget !== null) return yield* this.finish(budget, false);
        if (this.opts.signal.aborted) return yield* this.finish(interrupted(), false);
        const outcome = yield* this.iterate();
        if (outcome !== null) return outcome;
      }
    } catch (err) {
      if (isNaviError(err) && err.code === 'iteration_exists') {
        // Another navi drove this run meanwhile (a race past the takeover check): the row is
        // its to write, not ours to mark failed.
        throw new StorageError('run_taken_over', `another navi committed iteration ${this.state.iteration + 1} of loop run ${this.runId} first; this one stops without touching the run`);
      }
      await this.deps.store.loopRuns
        .update(this.runId, {
          status: 'failed',
          reason: isNaviError(err) ? err.code : 'unexpected_error',
          promptTokens: this.state.promptTokens,
          completionTokens: this.state.completionTokens,
        })
        .catch(() => undefined);
      throw err;
    } finally {
      heartbeat.stop();
    }
  }

  private startedEvent(): AgentEvent {
    const { loop, task } = this.opts;
    return {
      type: 'loop_started',
      task_name: task.name,
      task: task.prompt,
      source: task.source,
      resumed: this.open.resumed,
      start_iteration: this.state.iteration + 1,
      max_iterations: this.state.maxIterations,
      stagnation_threshold: loop.stagnation_threshold,
      exit_requires_explicit_signal: loop.exit_requires_explicit_signal,
      iteration_approval: loop.iteration_approval,
      periodic_interval: loop.periodic_interval,
      never_pause_on_stagnation: loop.never_pause_on_stagnation,
      stagnation_diversify_strategy: loop.stagnation_diversify_strategy,
      decisions: this.opts.decisions.kind,
      checks: task.checks.map((c) => c.name),
      max_tokens: this.opts.maxTokens,
      deadline_at: this.opts.deadlineAt?.toISOString() ?? null,
      iteration_timeout_s: Math.round(this.opts.iterationTimeoutMs / 1000),
      git_repo: this.open.git.repo,
      sandbox: this.opts.turn.shell.sandbox?.mode ?? 'off',
      sandbox_network: this.opts.turn.shell.sandbox?.network ?? false,
    };
  }

  /** A budget that is already spent (checked before each iteration). */
  private budgetEnding(): Ending | null {
    const spent = this.state.promptTokens + this.state.completionTokens;
    if (this.opts.maxTokens !== null && spent >= this.opts.maxTokens) {
      return { status: 'budget_exhausted', reason: 'max_tokens', message: `token budget spent: ${spent} of ${this.opts.maxTokens} tokens`, marker: 'partial' };
    }
    if (this.opts.deadlineAt !== null && this.now() >= this.opts.deadlineAt.getTime()) {
      return { status: 'budget_exhausted', reason: 'deadline', message: `deadline reached (${this.opts.deadlineAt.toISOString()})`, marker: 'partial' };
    }
    return null;
  }

  private async *iterate(): Events<LoopOutcome | null> {
    const s = this.state;
    const n = s.iteration + 1;
    const startedAt = new Date(this.now());
    yield this.tag({ type: 'iteration_started', max_iterations: s.maxIterations, tokens_spent: s.promptTokens + s.completionTokens }, n);
    const git = this.open.git;
    const { before, message } = await this.timed('pre_turn', async () => {
      if (!git.repo) git.repo = await git.probe.isRepo(this.cwd);
      return {
        before: this.treeAfterLast ?? (await observeTree(this.cwd, git)),
        message: buildIterationMessage({
          task: this.opts.task.prompt,
          iteration: n,
          maxIterations: s.maxIterations,
          checkNames: this.opts.task.checks.map((c) => c.name),
          previousStatus: s.previousStatus,
          notes: s.notes,
        }),
      };
    });
    const turn = yield* runIterationTurn({
      agent: this.deps.agent,
      base: this.opts.turn,
      sessionId: this.open.run.sessionId,
      profileId: this.opts.profileId,
      message,
      iteration: n,
      signal: this.opts.signal,
      deadlineAt: this.opts.deadlineAt,
      iterationTimeoutMs: this.opts.iterationTimeoutMs,
      now: this.now,
    });
    const usage = turn.outcome.usage;
    s.promptTokens += usage.promptTokens;
    s.completionTokens += usage.completionTokens;
    this.modelCalls += turn.outcome.modelCalls;
    this.finalText = turn.outcome.text;
    if (turn.stop !== null) return yield* this.finish(stopEnding(turn.stop, this.opts), false);

    const collected = await this.timed('evidence', () =>
      collectEvidence({
        cwd: this.cwd,
        activity: turn.activity,
        git,
        before,
        changedSinceStartBefore: s.changedSinceStart,
        runStartedAt: this.open.startedAt,
      }),
    );
    this.treeAfterLast = null;
    const untouched = this.opts.task.checks.length === 0 && this.opts.task.ticket === undefined && this.opts.decisions.kind !== 'terminal';
    if (untouched) this.treeAfterLast = collected.after;
    // The model's sandbox: a check runs files the model could rewrite (issue 35).
    const sandbox = this.opts.turn.shell.sandbox;
    const refused: { what: string; message: string }[] = [];
    const checkEnv = {
      cwd: this.cwd,
      signal: this.opts.signal,
      redact: this.opts.turn.redact,
      // The invocation's environment, as the model's commands get it (with LOOP_ENV: a check that runs navi never loops).
      ...(this.opts.turn.shell.env ? { env: this.opts.turn.shell.env } : {}),
      ...(sandbox ? { sandbox, onSandboxRefusal: (what: string, message: string) => refused.push({ what, message }) } : {}),
    };
    const ticketDef = this.opts.task.ticket;
    const [checks, ticket] = await this.timed('checks', async () => [
      await runChecks(this.opts.task.checks, checkEnv),
      ticketDef !== undefined && !this.opts.signal.aborted ? await runTicket(ticketDef, checkEnv) : null,
    ] as const);
    if (this.opts.signal.aborted) return yield* this.finish(interrupted(), false);
    for (const c of checks) {
      if (this.warnedChecks.has(c.name)) continue;
      const warning = cannotRunWarning(c, this.opts.task.checks.find((t) => t.name === c.name)?.run ?? '');
      if (warning === null) continue;
      this.warnedChecks.add(c.name);
      yield this.tag({ type: 'warning', code: 'check_cannot_run', message: warning }, n);
    }
    // Said once per check and refusal: a check the sandbox stops fails every iteration the same way.
    for (const r of refused) {
      const key = `sandbox\0${r.what}\0${r.message}`;
      if (this.warnedChecks.has(key)) continue;
      this.warnedChecks.add(key);
      yield this.tag({ type: 'warning', code: 'sandbox_refused', message: this.opts.turn.redact(`${r.what}: ${r.message}`) }, n);
    }
    const evidence = withChecks(collected.evidence, checks, ticket);
    const evalStart = performance.now();
    const ev = evaluateIteration({
      evidence,
      finalText: turn.activity.finalText,
      signalArgs: turn.activity.signalArgs,
      iteration: n,
      maxIterations: s.maxIterations,
      hashHistory: s.hashHistory,
      previousHash: s.previousHash,
      stagnationThreshold: this.opts.loop.stagnation_threshold,
      requireExplicitSignal: this.opts.loop.exit_requires_explicit_signal,
    });
    this.deps.timing?.('evaluate', performance.now() - evalStart);
    yield this.tag(statusEvent(ev, evidence), n);
    yield this.tag(gateEvent(ev), n);

    const row: IterationRow = {
      iteration: n,
      phase: ev.phase.phase,
      indicators: ev.indicators.values,
      evidence: evidenceRecord(evidence, { head: collected.head, unknown: collected.unknown, lastAction: turn.activity.lastAction, shellCommands: turn.activity.shellRuns.length }),
      stateHash: ev.hash,
      gateDecision: ev.gate.decision,
      gateReason: ev.gate.reason,
      exitSignal: ev.signal === null ? null : { exit: ev.signal.exit, reason: ev.signal.reason, source: ev.signal.source, ...(ev.signal.rejected ? { rejected: ev.signal.rejected } : {}) },
      statusBlock: ev.block,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      durationMs: Math.max(0, this.now() - startedAt.getTime()),
      startedAt,
      finishedAt: new Date(this.now()),
    };
    const pending: PendingDecision = { evaluation: ev, final_text: turn.activity.finalText, last_action: turn.activity.lastAction, previous_hash: s.previousHash };
    return yield* this.conclude(n, pending, { row, evidence }, turnEnding(turn.outcome.stopReason, turn.outcome.error));
  }

  /** The run row's counters as the runner holds them. */
  private counters(): LoopRunPatch {
    const s = this.state;
    return { maxIterations: s.maxIterations, hashHistory: s.hashHistory, stagnationCount: s.stagnationCount, diversifications: s.diversifications, promptTokens: s.promptTokens, completionTokens: s.completionTokens };
  }

  /** What the runner keeps of an iteration once it is in the database. */
  private committed(n: number, ev: Evaluation, evidence: Evidence | null): void {
    const s = this.state;
    s.iteration = n;
    s.last = { phase: ev.phase.phase, indicators: ev.indicators, hash: ev.hash };
    if (evidence !== null) {
      s.changedSinceStart = [...evidence.filesChangedSinceStart];
      this.lastEvidence = evidence;
    }
    this.lastSignal = ev.signal;
  }

  /**
   * The decisions on an evaluated iteration, and its record. `fresh` is the iteration just run
   * (null: a resumed iteration committed before its question was answered). Before anyone is
   * asked, the iteration is committed with its decision pending: a Ctrl-C at the menu keeps it,
   * and a resume asks again (pending-decision.ts).
   */
  private async *conclude(n: number, p: PendingDecision, fresh: { row: IterationRow; evidence: Evidence } | null, turnEnd: Ending | null): Events<LoopOutcome | null> {
    const s = this.state;
    const ev = p.evaluation;
    let inStore = fresh === null;
    const beforeAsk = async (): Promise<void> => {
      if (inStore || fresh === null) return;
      await this.deps.store.loopRuns.commitIteration(this.runId, { ...fresh.row, decision: pendingRecord(p) }, { ...this.counters(), reason: AWAITING_DECISION });
      inStore = true;
      this.committed(n, ev, fresh.evidence);
    };
    const verdict = yield* new IterationDecider(this.opts, s, beforeAsk).decide(n, ev, p.final_text, p.last_action);
    if (verdict.exit.kind === 'end' && !verdict.exit.commit) return yield* this.finish(inStore ? awaitingDecision(n) : verdict.exit.ending, false);
    const ending: Ending | null = verdict.exit.kind === 'end' ? verdict.exit.ending : turnEnd;

    const recorded = verdict.history !== s.hashHistory;
    const tip = verdict.history[verdict.history.length - 1];
    const stagnationCount = tip === undefined ? 0 : consecutiveCount(verdict.history.slice(0, -1), tip);
    const final = ending !== null && !isResumable(ending.status);
    const record = { ...verdict.record, notes_for_next: ending === null ? verdict.notes : [] };
    const runPatch: LoopRunPatch = {
      ...this.counters(),
      hashHistory: verdict.history,
      stagnationCount,
      ...(ending !== null ? { status: ending.status, reason: ending.reason, finishedAt: final ? new Date(this.now()) : null } : { reason: null }),
    };
    const commitStart = performance.now();
    if (inStore) await this.deps.store.loopRuns.settleIteration(this.runId, n, record, runPatch);
    else if (fresh !== null) await this.deps.store.loopRuns.commitIteration(this.runId, { ...fresh.row, decision: record }, runPatch);
    this.deps.timing?.('commit', performance.now() - commitStart);
    this.committed(n, ev, fresh?.evidence ?? null);
    s.hashHistory = verdict.history;
    s.stagnationCount = stagnationCount;
    if (recorded) s.previousHash = ev.hash;
    s.previousStatus = ev.block;
    s.notes = verdict.notes;
    return ending === null ? null : yield* this.finish(ending, true);
  }

  /** Ends the run: the row (unless the ending was committed with the iteration), the marker, the final event. */
  private async *finish(end: Ending, committed: boolean): Events<LoopOutcome> {
    const s = this.state;
    if (!committed) {
      await this.deps.store.loopRuns.update(this.runId, {
        status: end.status,
        reason: end.reason,
        maxIterations: s.maxIterations,
        promptTokens: s.promptTokens,
        completionTokens: s.completionTokens,
        ...(isResumable(end.status) ? {} : { finishedAt: new Date(this.now()) }),
      });
    }
    const ctx: EndContext = {
      runId: this.runId,
      cwd: this.cwd,
      task: this.opts.task,
      iteration: s.iteration,
      maxIterations: s.maxIterations,
      last: s.last,
      evidence: this.lastEvidence,
      signal: this.lastSignal,
      requireExplicitSignal: this.opts.loop.exit_requires_explicit_signal,
      now: new Date(this.now()),
    };
    const marker = await endingMarker(end, ctx);
    if (marker.warning !== undefined) yield { type: 'warning', code: 'marker_not_written', message: marker.warning };
    yield loopCompleteEvent(end, ctx, marker.path);
    return {
      status: end.status,
      reason: end.reason,
      message: end.message,
      runId: this.runId,
      sessionId: this.open.run.sessionId,
      iterations: s.iteration,
      maxIterations: s.maxIterations,
      // The same as loop_complete and its block say: with the ending's marker.
      indicators: s.last === null ? null : { ...endingIndicators(s.last.indicators, marker.path !== null).values },
      stateHash: s.last?.hash ?? null,
      finalText: this.finalText,
      modelCalls: this.modelCalls,
      usage: { promptTokens: s.promptTokens, completionTokens: s.completionTokens },
      marker: marker.path,
    };
  }
}

