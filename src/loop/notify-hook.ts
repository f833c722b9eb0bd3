/**
 * The loop's notifications (issue 19): watches the runner's events and tells the notifier when a
 * person must answer (`approval_requested`: approval, completion, stagnation, max iterations),
 * and how the run ended (`failed` or `finished`, from its outcome or the error it threw). The
 * notifier sends off the loop's path; its give-ups come back here as `warning` events
 * (`notify_failed`), and at the end pending sends get the notifier's bounded grace.
 */
import type { AgentEvent } from '../agent/events.js';
import type { NotifyEventKind } from '../config/notify-schema.js';
import { EXIT, isNaviError } from '../errors.js';
import type { Notifier } from '../notify/notifier.js';
import type { NotifyEvent } from '../notify/notify-event.js';
import { LOOP_EXIT_STATUS, type LoopEndStatus, type LoopOutcome } from './runner-types.js';
import type { Task } from './task-file.js';

/** Which notification an ending is: the run did its task or was stopped by a person › it did not. */
export function endingKind(status: LoopEndStatus, reason: string): NotifyEventKind {
  if (status === 'completed' || status === 'interrupted') return 'finished';
  if (status === 'aborted') return reason === 'user_aborted' ? 'finished' : 'failed';
  return 'failed';
}

/** What the hook knows of the run. */
export interface NotifyContext {
  runId: string;
  task: Task;
  /** The run's page, when a server shows it. */
  pageUrl?: ((runId: string) => string) | undefined;
  now: () => number;
  /** Grace for pending sends at the end (default the notifier's). */
  graceMs?: number | undefined;
}

/** Follows the run's events: where it is, and the last status block. */
class RunWatch {
  iteration: number | null = null;
  maxIterations: number | null = null;
  block: string | null = null;
  endBlock: string | null = null;
  resumeCommand: string | undefined;

  constructor(private readonly ctx: NotifyContext) {}

  /** The fields every notification carries. */
  base(kind: NotifyEventKind): NotifyEvent {
    const { runId, task } = this.ctx;
    return {
      kind,
      run_id: runId,
      task_name: task.name,
      task: task.prompt,
      iteration: this.iteration,
      max_iterations: this.maxIterations,
      status_block: this.block,
      link: this.ctx.pageUrl?.(runId) ?? null,
      at: new Date(this.ctx.now()).toISOString(),
    };
  }

  /** Takes in one event; returns the notification it calls for, if any. */
  see(ev: AgentEvent): NotifyEvent | null {
    if (ev.type === 'loop_started') this.maxIterations = ev.max_iterations;
    else if (ev.type === 'iteration_started') {
      this.iteration = ev.iteration ?? this.iteration;
      this.maxIterations = ev.max_iterations;
    } else if (ev.type === 'iteration_status') this.block = ev.block;
    else if (ev.type === 'loop_complete') {
      this.endBlock = ev.block ?? null;
      this.resumeCommand = ev.resume_command;
    } else if (ev.type === 'approval_requested') {
      return { ...this.base('waiting'), iteration: ev.iteration ?? this.iteration, prompt: ev.prompt, question: ev.question, options: [...ev.options], status_block: ev.block ?? this.block };
    }
    return null;
  }

  /** The ending's notification. */
  ending(o: LoopOutcome): NotifyEvent {
    return {
      ...this.base(endingKind(o.status, o.reason)),
      iteration: o.iterations,
      max_iterations: o.maxIterations,
      outcome: o.status,
      reason: o.reason,
      exit_code: EXIT[LOOP_EXIT_STATUS[o.status]],
      message: o.message,
      ...(this.resumeCommand !== undefined ? { resume_command: this.resumeCommand } : {}),
      status_block: this.endBlock ?? this.block,
    };
  }

  /** The notification of a run that threw. */
  failure(err: unknown): NotifyEvent {
    return {
      ...this.base('failed'),
      outcome: 'failed',
      reason: isNaviError(err) ? err.code : 'unexpected_error',
      exit_code: isNaviError(err) ? err.exitCode : EXIT.error,
      message: isNaviError(err) ? err.message : 'an unexpected error stopped the run',
    };
  }
}

function* warnings(n: Notifier): Generator<AgentEvent> {
  for (const message of n.takeWarnings()) yield { type: 'warning', code: 'notify_failed', message };
}

/** The runner's events, passed on unchanged, with the notifications they call for sent aside. */
export async function* withNotifications(events: AsyncGenerator<AgentEvent, LoopOutcome>, n: Notifier, ctx: NotifyContext): AsyncGenerator<AgentEvent, LoopOutcome> {
  const watch = new RunWatch(ctx);
  let outcome: LoopOutcome;
  try {
    for (;;) {
      const step = await events.next();
      if (step.done) {
        outcome = step.value;
        break;
      }
      const note = watch.see(step.value);
      if (note !== null) n.notify(note);
      yield* warnings(n);
      yield step.value;
    }
  } catch (err) {
    n.notify(watch.failure(err));
    await n.drain(ctx.graceMs);
    yield* warnings(n);
    throw err;
  }
  n.notify(watch.ending(outcome));
  await n.drain(ctx.graceMs);
  yield* warnings(n);
  return outcome;
}
