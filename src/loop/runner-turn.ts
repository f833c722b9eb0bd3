/**
 * One iteration's agent turn (SPEC §7.1): the iteration message sent in the run's session with
 * `loop_signal` offered, its events forwarded (tagged with the loop iteration) and read for
 * evidence as they pass. The turn runs under three stops combined: SIGINT/SIGTERM, the run's
 * deadline and the per-iteration timeout; which one fired decides how the run ends.
 */
import type { AgentEvent } from '../agent/events.js';
import type { TurnOutcome } from '../agent/agent-types.js';
import { ActivityCollector, type IterationActivity } from './activity.js';
import type { LoopAgent, LoopTurnBase } from './runner-types.js';
import { LOOP_SIGNAL_TOOL } from './exit-signal.js';
import { setLongTimeout, type LongTimeout } from '../timers.js';

/** Which stop ended a turn early. */
export type TurnStop = 'interrupted' | 'deadline' | 'iteration_timeout';

/** What one turn produced. */
export interface TurnRun {
  outcome: TurnOutcome;
  activity: IterationActivity;
  /** Set when the turn was stopped before it finished. */
  stop: TurnStop | null;
}

/** What runIterationTurn needs. */
export interface TurnRequest {
  agent: LoopAgent;
  base: LoopTurnBase;
  sessionId: string;
  profileId: string;
  message: string;
  iteration: number;
  /** SIGINT/SIGTERM. */
  signal: AbortSignal;
  deadlineAt: Date | null;
  iterationTimeoutMs: number;
  now: () => number;
}

/**
 * A signal that fires on `parent`, at `deadlineAt` or after `timeoutMs`, remembering which came
 * first. Timers are cleared by `dispose`.
 */
export function turnStops(parent: AbortSignal, deadlineAt: Date | null, timeoutMs: number, now: () => number): {
  signal: AbortSignal;
  reason(): TurnStop | null;
  dispose(): void;
} {
  const controller = new AbortController();
  let why: TurnStop | null = null;
  const fire = (reason: TurnStop): void => {
    if (why !== null) return;
    why = reason;
    controller.abort(new DOMException(`loop ${reason}`, 'AbortError'));
  };
  const onParent = (): void => fire('interrupted');
  if (parent.aborted) onParent();
  else parent.addEventListener('abort', onParent, { once: true });
  const timers: LongTimeout[] = [];
  // setLongTimeout, not setTimeout: a 30-day deadline or a 25-day iteration timeout is longer
  // than a Node timer can wait (2^31-1 ms) and would fire at once.
  if (deadlineAt !== null) timers.push(setLongTimeout(() => fire('deadline'), Math.max(0, deadlineAt.getTime() - now())));
  timers.push(setLongTimeout(() => fire('iteration_timeout'), Math.max(1, timeoutMs)));
  return {
    signal: controller.signal,
    reason: () => why,
    dispose: () => {
      for (const t of timers) t.clear();
      parent.removeEventListener('abort', onParent);
    },
  };
}

/** Runs the turn, yielding its events with `loop_iteration` set. */
export async function* runIterationTurn(req: TurnRequest): AsyncGenerator<AgentEvent, TurnRun> {
  const stops = turnStops(req.signal, req.deadlineAt, req.iterationTimeoutMs, req.now);
  const collector = new ActivityCollector(req.base.cwd);
  try {
    const events = req.agent.runStream({
      ...req.base,
      sessionId: req.sessionId,
      // The runner created the session (the run row references it), so every turn continues it.
      newSession: false,
      message: req.message,
      profileId: req.profileId,
      signal: stops.signal,
      kind: 'loop',
      extraTools: [LOOP_SIGNAL_TOOL],
    });
    for (;;) {
      const step = await events.next();
      if (step.done) {
        const outcome = step.value;
        const stop = outcome.stopReason === 'interrupted' ? (stops.reason() ?? 'interrupted') : null;
        return { outcome, activity: collector.result(), stop };
      }
      collector.observe(step.value);
      yield { ...step.value, loop_iteration: req.iteration };
    }
  } finally {
    stops.dispose();
  }
}
