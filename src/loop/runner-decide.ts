/**
 * What happens after an iteration is judged (SPEC §7 steps 7–10, seed 004): the approval gate
 * (strict / periodic; Adjust feeds back and leaves the hash unrecorded), the exit gate, stagnation
 * (a person decides at a terminal or through `--decisions`; headless runs auto-diversify with
 * never_pause_on_stagnation — the third time aborts — or abort), the gate's feedback and the
 * headless answer to a question, and max iterations (Extend / Complete / Abort; headless: stop
 * incomplete). Decides only: the runner commits and ends.
 */
import type { AgentEvent } from '../agent/events.js';
import { choiceLabel, MENUS, type Decision, type DecisionRequest } from './decisions.js';
import { diversifyInstruction, MAX_DIVERSIFICATIONS, nextDiversification } from './diversify.js';
import type { Evaluation } from './evaluate.js';
import { unmetIndicatorNames } from './indicators.js';
import { clarificationNote, headlessQuestionNote, questionAnswerNote, trailingQuestion } from './iteration-message.js';
import type { LoopState } from './run-state.js';
import type { Ending } from './runner-end.js';
import { decisionRecord, interrupted } from './runner-events.js';
import type { LoopRunOptions } from './runner-types.js';
import { detectStagnation, type StagnationResult } from './stagnation.js';
import { EXTEND_ITERATIONS, renderDiversify, renderMaxIterations, renderStagnation } from './status-block.js';

type Events<T> = AsyncGenerator<AgentEvent, T>;

/**
 * Where an iteration's decisions lead: on to the next iteration, or an ending — recorded with
 * this iteration (`commit`), or not (stopped while a person was being asked: the iteration is
 * redone on resume).
 */
export type IterationExit = { kind: 'next' } | { kind: 'end'; ending: Ending; commit: boolean };

const NEXT: IterationExit = { kind: 'next' };

/** Ends the run with this iteration recorded. */
function endWith(ending: Ending): IterationExit {
  return { kind: 'end', ending, commit: true };
}

/** Stopped while a person was being asked: nothing of this iteration is recorded. */
const STOPPED: IterationExit = { kind: 'end', ending: interrupted(), commit: false };

/** What the decisions of one iteration came to. */
export interface Verdict {
  exit: IterationExit;
  /** The hash history after this iteration (the same array when its hash is not recorded). */
  history: string[];
  /** Notes for the next iteration. */
  notes: string[];
  /** The decision record stored with the iteration. */
  record: Record<string, unknown>;
}

/** Decides for one evaluated iteration; holds the run's options and (mutable) state. */
export class IterationDecider {
  constructor(
    private readonly opts: LoopRunOptions,
    private readonly state: LoopState,
    /** Called before anyone is asked anything: the runner commits the iteration first (item 3 of issue 18). */
    private readonly beforeAsk?: () => Promise<void>,
  ) {}

  private tag<T extends AgentEvent>(ev: T, n: number): T {
    return { ...ev, iteration: n, loop_iteration: n };
  }

  /** Approval, exit gate, stagnation, feedback and max iterations for one evaluated iteration. */
  async *decide(n: number, ev: Evaluation, finalText: string, lastAction: string): Events<Verdict> {
    const s = this.state;
    const loop = this.opts.loop;
    const v: Verdict = { exit: NEXT, history: s.hashHistory, notes: [], record: {} };
    let record = true;
    const approvalDue = loop.iteration_approval === 'strict' || (loop.iteration_approval === 'periodic' && n % loop.periodic_interval === 0);
    if (approvalDue) {
      // Once the gate has passed, accepting the iteration finishes the loop: the menu asks that.
      const req: DecisionRequest =
        ev.gate.decision === 'exit'
          ? { prompt: 'completion', iteration: n, question: `The exit gate passed on iteration ${n} (${ev.gate.reason}). Finish the loop here?` }
          : { prompt: 'approval', iteration: n, question: `Accept iteration ${n} and continue?` };
      const d = yield* this.ask(req, 'continue');
      if (this.opts.signal.aborted) return { ...v, exit: STOPPED };
      v.record.approval = decisionRecord(d);
      if (d.decision === 'abort') {
        v.exit = endWith({ status: 'aborted', reason: 'user_aborted', message: `aborted at the approval prompt of iteration ${n}`, marker: 'partial' });
        return v;
      }
      if (d.decision === 'adjust') {
        // Seed 004: an adjusted iteration is judged again as fresh progress, so its hash is not recorded.
        record = false;
        v.notes.push(`Feedback from the user on iteration ${n} (act on it in this iteration): ${d.feedback?.trim() || '(no details given; re-check your approach)'}`);
      }
    }
    if (record && ev.gate.decision === 'exit') {
      v.history = [...s.hashHistory, ev.hash];
      v.exit = endWith({ status: 'completed', reason: 'gate_passed', message: null, marker: 'complete' });
      return v;
    }
    if (record) {
      v.history = [...s.hashHistory, ev.hash];
      const stuck = detectStagnation(v.history, loop.stagnation_threshold);
      if (stuck.stagnant) {
        const handled = yield* this.onStagnation(n, ev, stuck, v, lastAction);
        if (handled.exit.kind === 'end') return handled;
      }
    }
    if (ev.gate.decision === 'blocked' && ev.gate.feedback !== undefined) v.notes.push(ev.gate.feedback);
    else if (ev.signal?.rejected !== undefined) v.notes.push(`Your exit signal was not accepted: ${ev.signal.rejected}.`);
    if (ev.signal?.exit !== true) {
      const question = trailingQuestion(finalText);
      if (question !== null) {
        if (this.opts.decisions.kind !== 'headless' && this.opts.decisions.answerQuestion !== undefined) await this.beforeAsk?.();
        const answer = (await this.opts.decisions.answerQuestion?.(question, this.opts.signal)) ?? null;
        if (this.opts.signal.aborted) return { ...v, exit: STOPPED };
        v.notes.push(answer !== null && answer.trim() !== '' ? questionAnswerNote(answer) : headlessQuestionNote());
        v.record.question = { question, answer };
      }
    }
    if (n >= s.maxIterations) {
      const block = renderMaxIterations({
        maxIterations: s.maxIterations,
        phase: ev.phase.phase,
        indicators: ev.indicators,
        exitSignal: ev.signal?.exit === true,
        progressMade: [`Phase ${ev.phase.phase}: ${ev.phase.reason}`, `Indicators met: ${ev.met}/${ev.total}`],
      });
      const d = yield* this.ask({ prompt: 'max_iterations', iteration: n, question: `Max iterations (${s.maxIterations}) reached. What now?`, block }, null);
      if (this.opts.signal.aborted) return { ...v, exit: STOPPED };
      if (d !== null) v.record.max_iterations = decisionRecord(d);
      if (d?.decision === 'extend') s.maxIterations += EXTEND_ITERATIONS;
      else if (d?.decision === 'complete') v.exit = endWith({ status: 'completed', reason: 'user_completed', message: null, marker: 'complete' });
      else if (d?.decision === 'abort') v.exit = endWith({ status: 'aborted', reason: 'user_aborted', message: `aborted at max iterations (${s.maxIterations})`, marker: 'partial' });
      else {
        v.exit = endWith({
          status: 'incomplete',
          reason: 'max_iterations',
          message: `max iterations reached (${n}/${s.maxIterations}) without passing the exit gate (${ev.gate.reason})`,
          marker: 'partial',
        });
      }
    }
    return v;
  }

  private async *onStagnation(n: number, ev: Evaluation, stuck: StagnationResult, v: Verdict, lastAction: string): Events<Verdict> {
    const s = this.state;
    const loop = this.opts.loop;
    const block = renderStagnation({ stagnation: stuck, phase: ev.phase.phase, indicators: ev.indicators, lastAction });
    const reason = stuck.reason ?? 'same_state';
    const detected = (action: 'prompt' | 'diversify' | 'abort'): AgentEvent =>
      this.tag(
        {
          type: 'stagnation_detected',
          reason,
          count: stuck.count,
          ...(stuck.period !== undefined ? { period: stuck.period } : {}),
          threshold: loop.stagnation_threshold,
          state_hash: ev.hash,
          hash_history: [...v.history],
          action,
          block,
        },
        n,
      );
    const what = reason === 'oscillation' ? `oscillating between ${stuck.period ?? 2} states for ${stuck.count} iterations` : `same state for ${stuck.count} iterations`;
    const abortReason = reason === 'oscillation' ? 'oscillation' : 'stagnation';
    v.record.stagnation = { reason, count: stuck.count, history: [...v.history] };
    if (loop.never_pause_on_stagnation) {
      const next = nextDiversification(s.diversifications);
      if (next.action === 'abort') {
        yield detected('abort');
        v.exit = endWith({ status: 'aborted', reason: abortReason, message: `${what}; ${next.reason}`, marker: 'aborted' });
        return v;
      }
      yield detected('diversify');
      const strategy = loop.stagnation_diversify_strategy;
      const instruction = diversifyInstruction(strategy, {
        task: this.opts.task.prompt,
        phase: ev.phase.phase,
        unmet: unmetIndicatorNames(ev.indicators.values),
        stagnation: stuck,
        attempt: next.attempt,
      });
      yield this.tag({ type: 'diversified', strategy, attempt: next.attempt, max_attempts: MAX_DIVERSIFICATIONS, instruction, block: renderDiversify({ strategy, stagnation: stuck }) }, n);
      s.diversifications = next.attempt;
      v.record.diversification = { strategy, attempt: next.attempt };
      v.notes.push(instruction);
      v.history = [];
      return v;
    }
    if (this.opts.decisions.kind !== 'headless') {
      yield detected('prompt');
      const d = yield* this.ask({ prompt: 'stagnation', iteration: n, question: 'Stagnation detected. How should the loop go on?', block }, null);
      if (this.opts.signal.aborted) return { ...v, exit: STOPPED };
      if (d !== null) (v.record.stagnation as Record<string, unknown>).decision = decisionRecord(d);
      if (d?.decision === 'continue' || d?.decision === 'adjust') {
        v.history = [];
        if (d.decision === 'adjust') v.notes.push(clarificationNote(d.feedback?.trim() || '(no details given)'));
        return v;
      }
      v.exit = endWith(d?.decision === 'abort'
          ? { status: 'aborted', reason: 'user_aborted', message: `aborted at the stagnation prompt (${what})`, marker: 'partial' }
          : { status: 'aborted', reason: abortReason, message: `${what}; no decision left to continue`, marker: 'aborted' });
      return v;
    }
    yield detected('abort');
    v.exit = endWith({
      status: 'aborted',
      reason: abortReason,
      message: `${what} (threshold ${loop.stagnation_threshold}); nobody can be asked in a headless run — set loop_mode.never_pause_on_stagnation (with max_iterations) to auto-diversify instead`,
      marker: 'aborted',
    });
    return v;
  }

  /**
   * Asks the decision source. With no answer (headless, or the decisions ran out), `fallback`
   * is the headless rule's choice (null: the caller applies its own rule).
   */
  private async *ask<F extends Decision['decision'] | null>(req: DecisionRequest, fallback: F): Events<F extends null ? Decision | null : Decision> {
    const source = this.opts.decisions;
    let d: Decision | null = null;
    if (source.kind !== 'headless') {
      await this.beforeAsk?.();
      yield this.tag(
        {
          type: 'approval_requested',
          prompt: req.prompt,
          question: req.question,
          options: MENUS[req.prompt].map((o) => o.label),
          ...(req.block !== undefined ? { block: req.block } : {}),
        },
        req.iteration,
      );
      d = await source.decide(req, this.opts.signal);
      for (const w of source.takeWarnings?.() ?? []) yield this.tag({ type: 'warning', code: 'decisions_exhausted', message: w }, req.iteration);
    }
    if (d === null && fallback !== null) d = { decision: fallback, source: 'headless' };
    if (d !== null && !this.opts.signal.aborted) {
      yield this.tag(
        {
          type: 'approval_decision',
          prompt: req.prompt,
          decision: d.decision,
          choice: choiceLabel(req.prompt, d.decision),
          source: d.source,
          ...(d.feedback !== undefined ? { feedback: d.feedback } : {}),
          ...(d.line !== undefined ? { line: d.line } : {}),
        },
        req.iteration,
      );
    }
    return d as F extends null ? Decision | null : Decision;
  }
}
