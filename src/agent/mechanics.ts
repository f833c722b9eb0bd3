/**
 * The thinking mechanics of seed 000 as pure functions: which reminders a request carries
 * (iteration budget, goal anchor, anti-stall warning) and where they go.
 *
 * Where matters because of Ollama's templates (template/template.go `collate`): every
 * `role:"system"` message is gathered into `.System` at the TOP of the rendered prompt, so a
 * reminder sent as a system message changes the prompt's first bytes on every call and Ollama
 * prefills the whole history again; with llama3.1's template a trailing system message also
 * drops the tools. So reminders travel in the request's LAST message — appended to the last
 * tool result, or as a trailing user message — and are never stored (SPEC §8).
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

/** The reminders for one request, in a fixed order. */
export function reminderNotes(input: MechanicsInput): string[] {
  const { settings, iteration, maxIterations } = input;
  const out: string[] = [];
  if (settings.goalAnchoring && goalAnchorDue(iteration, settings.goalInterval)) {
    const todo = input.todos.length > 0 ? `Todo:\n${renderTodos([...input.todos])}` : '';
    out.push(fillPrompt(loadPrompt('agent/goal-anchor.md'), { task: input.task.trim(), todo }));
  }
  if (settings.antiStall && antiStallDue(input.stalledIterations, settings.antiStallThreshold)) {
    out.push(fillPrompt(loadPrompt('agent/anti-stall.md'), { count: input.stalledIterations }));
  }
  if (settings.iterationBudget) {
    const last = iteration >= maxIterations;
    const template = loadPrompt(last ? 'agent/iteration-budget-last.md' : 'agent/iteration-budget.md');
    out.push(fillPrompt(template, { iteration, max: maxIterations, left: maxIterations - iteration }));
  }
  return out;
}

/**
 * `request` with `notes` delivered in its last message, template-safe: appended to a last tool
 * result (a copy; the stored one stays as it was), otherwise as a trailing user message (Ollama
 * merges it into a last user message, as if appended). A request never ends with an assistant
 * message — most templates would render it open and have the model continue it — so one that
 * would (an injected plan) gets a short continue note. Returns `request`, changed in place.
 */
export function withNotes(request: ChatMessage[], notes: readonly string[]): ChatMessage[] {
  const last = request.at(-1);
  if (notes.length === 0) {
    if (last?.role === 'assistant') request.push({ role: 'user', content: loadPrompt('agent/continue.md') });
    return request;
  }
  const text = notes.join('\n\n');
  if (last?.role === 'tool') request[request.length - 1] = { ...last, content: `${last.content}\n\n${text}` };
  else request.push({ role: 'user', content: text });
  return request;
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
