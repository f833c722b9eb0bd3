/**
 * The thinking mechanics of seed 000 as pure functions: which transient messages to append to
 * a request (iteration budget, goal anchor, anti-stall warning). Transient messages go at the
 * END of the request and are never stored, so the cached prefix stays byte-identical.
 */
import type { ChatMessage } from '../llm/types.js';
import { fillPrompt, loadPrompt } from '../prompts.js';
import { renderTodos } from '../tools/builtin/todo.js';
import type { TodoItem } from '../tools/types.js';

export interface MechanicsSettings {
  iterationBudget: boolean;
  goalAnchoring: boolean;
  /** Goal reminder every N iterations. */
  goalInterval: number;
  antiStall: boolean;
  /** Iterations without todo progress before the warning fires (and again every N after). */
  antiStallThreshold: number;
}

export interface MechanicsInput {
  settings: MechanicsSettings;
  /** 1-based tool-loop iteration about to call the model. */
  iteration: number;
  maxIterations: number;
  /** The user's original task for this turn. */
  task: string;
  todos: readonly TodoItem[];
  /** Consecutive finished iterations without todo progress. */
  stalledIterations: number;
}

/** Whether the goal anchor is due this iteration (every N, never on the first). */
export function goalAnchorDue(iteration: number, interval: number): boolean {
  return interval > 0 && iteration > 1 && (iteration - 1) % interval === 0;
}

/** Whether the anti-stall warning fires: at the threshold, then every threshold iterations. */
export function antiStallDue(stalled: number, threshold: number): boolean {
  return threshold > 0 && stalled >= threshold && (stalled - threshold) % threshold === 0;
}

/** The transient messages for one request, in a fixed order. */
export function transientMessages(input: MechanicsInput): ChatMessage[] {
  const { settings, iteration, maxIterations } = input;
  const out: ChatMessage[] = [];
  if (settings.goalAnchoring && goalAnchorDue(iteration, settings.goalInterval)) {
    const todo = input.todos.length > 0 ? `Todo:\n${renderTodos([...input.todos])}` : '';
    out.push({ role: 'system', content: fillPrompt(loadPrompt('agent/goal-anchor.md'), { task: input.task.trim(), todo }) });
  }
  if (settings.antiStall && antiStallDue(input.stalledIterations, settings.antiStallThreshold)) {
    out.push({ role: 'system', content: fillPrompt(loadPrompt('agent/anti-stall.md'), { count: input.stalledIterations }) });
  }
  if (settings.iterationBudget) {
    const last = iteration >= maxIterations;
    const template = loadPrompt(last ? 'agent/iteration-budget-last.md' : 'agent/iteration-budget.md');
    out.push({ role: 'system', content: fillPrompt(template, { iteration, max: maxIterations, left: maxIterations - iteration }) });
  }
  return out;
}

/** A cheap fingerprint of the todo list: progress = any change in items or statuses. */
export function todoFingerprint(todos: readonly TodoItem[]): string {
  return todos.map((t) => `${t.id}:${t.status}:${t.text.length}`).join('|');
}

/** Counts consecutive iterations whose todo fingerprint did not change. */
export class StallCounter {
  private stalled = 0;

  /** `initial`: the fingerprint when the turn started. */
  constructor(private last: string) {}

  /** Records the fingerprint after an iteration's tools ran; returns the stalled count. */
  observe(fingerprint: string): number {
    this.stalled = fingerprint === this.last ? this.stalled + 1 : 0;
    this.last = fingerprint;
    return this.stalled;
  }

  get count(): number {
    return this.stalled;
  }
}
