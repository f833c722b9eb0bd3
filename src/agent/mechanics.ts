/**
 * The thinking mechanics of seed 000 as pure functions: which reminders a request carries
 * (iteration budget, goal anchor, anti-stall warning) and where they go.
 *
 * Where matters because of Ollama's templates (template/template.go `collate`): every
 * `role:"system"` message is gathered into `.System` at the TOP of the rendered prompt, so a
 * reminder sent as a system message changes the prompt's first bytes on every call and Ollama
 * prefills the whole history again; with llama3.1's template a trailing system message also
 * drops the tools. So reminders travel in the LAST message of the request that first carries
 * them — appended to the tool result just added, or as a trailing user message — and, once sent,
 * stay there: they are part of the context and stored with that message (SPEC §8, "the history
 * is append-only within a run"). llama-server reuses only the longest common token prefix, and
 * SWA/hybrid models resume only from checkpoints near the previous prompt's end, so a note taken
 * back on the next call would cost a re-prefill of the last message and the reply every call.
 * For the same reason a note is sent when it says something new (`budgetNoteDue`).
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

/**
 * Whether the iteration budget note says something new at this iteration: the budget itself on
 * the first call, then half-way, with three left, and on the last iteration. Not on every call:
 * each note stays in the history for the rest of the run.
 */
export function budgetNoteDue(iteration: number, maxIterations: number): boolean {
  if (iteration <= 1 || iteration >= maxIterations) return true;
  const left = maxIterations - iteration;
  return left === 3 || left === Math.floor(maxIterations / 2);
}

/** The reminders due for one request, in a fixed order. */
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
  if (settings.iterationBudget && budgetNoteDue(iteration, maxIterations)) {
    const last = iteration >= maxIterations;
    const template = loadPrompt(last ? 'agent/iteration-budget-last.md' : 'agent/iteration-budget.md');
    out.push(fillPrompt(template, { iteration, max: maxIterations, left: maxIterations - iteration }));
  }
  return out;
}

/**
 * Notes delivered with the message that carries them into the context for good: appended to
 * `last` when it is a tool result not yet sent (returned as its replacement), otherwise as a
 * trailing user message (Ollama's `collate` merges it into a last user message, as if appended).
 */
export function noteCarrier(last: ChatMessage | undefined, notes: readonly string[]): { replaceLast: ChatMessage } | { append: ChatMessage } | null {
  if (notes.length === 0) return null;
  const text = notes.join('\n\n');
  if (last?.role === 'tool') return { replaceLast: { ...last, content: `${last.content}\n\n${text}` } };
  return { append: { role: 'user', content: text } };
}

/**
 * `request` with one-call `notes` (a correction after the model's mistake, whose failed attempt
 * is not sent back either) in its last message, template-safe: appended to a last tool result (a
 * copy; the stored one stays as it was), otherwise as a trailing user message. A request never
 * ends with an assistant message — most templates would render it open and have the model
 * continue it — so one that would gets a short continue note. Returns `request`, changed in place.
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
