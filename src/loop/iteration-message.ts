/**
 * The message that starts each loop iteration (SPEC §7.1): the task, where the loop stands,
 * how completion is judged, the previous NAVIGATOR_STATUS block, and what the runner has to
 * tell the model this time — the gate's refusal, a diversification instruction, a person's
 * Adjust/Clarify feedback, or (headless) that its question cannot be answered. The wording
 * lives in `prompts/loop/`.
 */
import { fillPrompt, loadPrompt } from '../prompts.js';

/** What one iteration message says. */
export interface IterationMessageInput {
  /** The task prompt. */
  task: string;
  /** This iteration, 1-based. */
  iteration: number;
  /** The run's max_iterations. */
  maxIterations: number;
  /** Names of the task's checks (the runner runs them after the turn). */
  checkNames: readonly string[];
  /** The previous iteration's NAVIGATOR_STATUS block; null on the first. */
  previousStatus: string | null;
  /** The runner's notes for this iteration, in order (each may span lines). */
  notes: readonly string[];
}

function checksPhrase(names: readonly string[]): string {
  if (names.length === 0) return 'no checks of its own (so your own test runs count)';
  const quoted = names.map((n) => `"${n}"`);
  return `the task's checks (${quoted.join(', ')})`;
}

/** The iteration message (see the module comment). */
export function buildIterationMessage(input: IterationMessageInput): string {
  const parts = [
    fillPrompt(loadPrompt('loop/iteration.md'), {
      iteration: input.iteration,
      max_iterations: input.maxIterations,
      task: input.task.trim(),
      checks: checksPhrase(input.checkNames),
    }),
  ];
  if (input.previousStatus !== null) {
    parts.push(`Status after the previous iteration (computed by the runner from evidence):\n${input.previousStatus}`);
  }
  if (input.notes.length > 0) {
    parts.push(`From the runner, for this iteration:\n\n${input.notes.map((n) => n.trim()).join('\n\n')}`);
  }
  return `${parts.join('\n\n')}\n`;
}

/** The headless note when the previous turn asked a question nobody can answer. */
export function headlessQuestionNote(): string {
  return loadPrompt('loop/headless-question.md');
}

/** The note carrying a person's answer to the model's question. */
export function questionAnswerNote(answer: string): string {
  return fillPrompt(loadPrompt('loop/question-answer.md'), { answer: answer.trim() });
}

/** The note carrying a person's clarification (the stagnation menu's Clarify, `--resume --clarify`). */
export function clarificationNote(text: string): string {
  return `The user clarified what is blocking progress (act on it): ${text}`;
}

/** Characters stripped from a line's end before looking for `?` (Markdown emphasis, quotes, brackets). */
const TRAILING_DECORATION = /[\s*_`"'”’)\]]+$/;

/**
 * The question the text ends with, or null: its last non-empty line (signal lines ignored) ends
 * in `?`. A turn that ends by asking the user something is waiting for an answer that a headless
 * loop cannot give.
 */
export function trailingQuestion(text: string): string | null {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.includes('nav-signal:') && !l.startsWith('```'));
  const last = lines[lines.length - 1];
  if (last === undefined) return null;
  return last.replace(TRAILING_DECORATION, '').endsWith('?') ? last : null;
}
