/**
 * The decision source of a loop run the server started: the runner asks (approval, stagnation,
 * max iterations) and waits until POST /runs/{id}/decisions (or a WebSocket `decision` message)
 * answers with a `--decisions` line's shape. A word that does not answer the menu asked is
 * refused (400) and the question stays open. A stop ends the wait with no answer: the runner
 * applies its own rules, and the stop ends the run.
 */
import { MENUS, type Decision, type DecisionRequest, type DecisionSource, type DecisionWord } from '../loop/decisions.js';

/** A question waiting for its answer. */
export interface PendingQuestion {
  prompt: DecisionRequest['prompt'];
  iteration: number;
  question: string;
  options: string[];
  /** The words that answer it. */
  words: DecisionWord[];
  block?: string;
}

export type AnswerResult = { ok: true } | { ok: false; code: 'no_pending_decision' | 'decision_invalid'; message: string };

export class ServerDecisions implements DecisionSource {
  // The runner's events name their source: answers from the server are the `--decisions` kind.
  readonly kind = 'decisions_file' as const;
  private waiting: { req: DecisionRequest; resolve: (d: Decision | null) => void } | null = null;

  /** The open question, or null. */
  get pending(): PendingQuestion | null {
    const w = this.waiting;
    if (w === null) return null;
    const menu = MENUS[w.req.prompt];
    return {
      prompt: w.req.prompt,
      iteration: w.req.iteration,
      question: w.req.question,
      options: menu.map((o) => o.label),
      words: menu.map((o) => o.word),
      ...(w.req.block !== undefined ? { block: w.req.block } : {}),
    };
  }

  decide(req: DecisionRequest, signal: AbortSignal): Promise<Decision | null> {
    if (signal.aborted) return Promise.resolve(null);
    return new Promise((resolve) => {
      const onAbort = (): void => {
        this.waiting = null;
        resolve(null);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting = {
        req,
        resolve: (d) => {
          signal.removeEventListener('abort', onAbort);
          this.waiting = null;
          resolve(d);
        },
      };
    });
  }

  /** Answers the open question. */
  answer(decision: DecisionWord, feedback?: string): AnswerResult {
    const w = this.waiting;
    if (w === null) return { ok: false, code: 'no_pending_decision', message: 'the run is not waiting for a decision' };
    const allowed = MENUS[w.req.prompt].map((o) => o.word);
    if (!allowed.includes(decision)) {
      return { ok: false, code: 'decision_invalid', message: `decision: "${decision}" does not answer the ${w.req.prompt.replace('_', ' ')} prompt of iteration ${w.req.iteration} (allowed: ${allowed.join(', ')})` };
    }
    w.resolve({ decision, source: 'decisions_file', ...(feedback !== undefined ? { feedback } : {}) });
    return { ok: true };
  }
}
