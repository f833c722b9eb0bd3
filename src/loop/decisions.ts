/**
 * Who answers the loop's three menus (seed 004): approval (Continue / Adjust / Abort),
 * stagnation (Continue / Clarify / Abort) and max iterations (Extend / Complete / Abort).
 * Three sources: a person at a terminal (`src/cli/`), `--decisions FILE|-` (JSON lines consumed
 * in order), and nobody — the headless rules of SPEC §7, applied by the runner whenever a
 * source has no answer. A source never waits on a stdin that is not a terminal.
 */
import { z } from 'zod';
import { InvalidInputError, printable } from '../errors.js';

/** The words of a decision (Clarify is written `adjust`). */
export const DECISION_WORDS = ['continue', 'adjust', 'abort', 'extend', 'complete'] as const;

/** One decision word. */
export type DecisionWord = (typeof DECISION_WORDS)[number];

/** Which menu is asked. */
export type PromptKind = 'approval' | 'completion' | 'stagnation' | 'max_iterations';

/** Where answers come from. */
export type DecisionSourceKind = 'terminal' | 'decisions_file' | 'headless';

/** Each menu's options: what is shown, and the word that picks it. */
export const MENUS: Readonly<Record<PromptKind, ReadonlyArray<{ label: string; word: DecisionWord }>>> = {
  approval: [
    { label: 'Continue', word: 'continue' },
    { label: 'Adjust', word: 'adjust' },
    { label: 'Abort', word: 'abort' },
  ],
  // Approval of an iteration that passed the exit gate: accepting it finishes the loop, so it says so.
  completion: [
    { label: 'Finish', word: 'continue' },
    { label: 'Adjust', word: 'adjust' },
    { label: 'Abort', word: 'abort' },
  ],
  stagnation: [
    { label: 'Continue', word: 'continue' },
    { label: 'Clarify', word: 'adjust' },
    { label: 'Abort', word: 'abort' },
  ],
  max_iterations: [
    { label: 'Extend', word: 'extend' },
    { label: 'Complete', word: 'complete' },
    { label: 'Abort', word: 'abort' },
  ],
};

/** The label a word has in a menu (`adjust` is Clarify at stagnation). */
export function choiceLabel(prompt: PromptKind, word: DecisionWord): string {
  return MENUS[prompt].find((o) => o.word === word)?.label ?? word;
}

/** A question the runner asks. */
export interface DecisionRequest {
  prompt: PromptKind;
  /** The loop iteration just finished. */
  iteration: number;
  /** e.g. `Accept iteration 3 and continue?` */
  question: string;
  /** The STAGNATION DETECTED / MAX ITERATIONS REACHED block, when the menu has one. */
  block?: string;
}

/** An answer. */
export interface Decision {
  decision: DecisionWord;
  /** Adjust / Clarify text for the next iteration. */
  feedback?: string;
  source: DecisionSourceKind;
  /** Line of the decisions input it came from. */
  line?: number;
}

/** Something that can answer the runner's menus. */
export interface DecisionSource {
  readonly kind: DecisionSourceKind;
  /** The answer, or null when there is none (headless rules apply). Throws InvalidInputError for a bad decisions line. */
  decide(req: DecisionRequest, signal: AbortSignal): Promise<Decision | null>;
  /** A person's answer to the model's question (terminals only); null: none given. */
  answerQuestion?(question: string, signal: AbortSignal): Promise<string | null>;
  /** Warnings since the last call (e.g. the decisions ran out), to emit as `warning` events. */
  takeWarnings?(): string[];
}

/** Nobody to ask: every menu gets the headless rule. */
export const headlessDecisions: DecisionSource = {
  kind: 'headless',
  decide: () => Promise.resolve(null),
};

/** One `--decisions` line. */
export const DecisionLineSchema = z.strictObject({
  decision: z.enum(DECISION_WORDS, { error: `"decision" must be one of ${DECISION_WORDS.join(', ')}` }),
  feedback: z.string({ error: '"feedback" must be text' }).optional(),
});

/** Parses and validates one decisions line; InvalidInputError (`decisions_invalid`, exit 2) names the line. */
export function parseDecisionLine(text: string, line: number, display: string): Decision {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new InvalidInputError('decisions_invalid', `${display}:${line}: not a JSON object: ${printable(JSON.stringify(text.slice(0, 80)))}; expected {"decision":"continue"|"adjust"|"abort"|"extend"|"complete","feedback"?:"…"}`);
  }
  const parsed = DecisionLineSchema.safeParse(raw);
  if (!parsed.success) {
    const why = parsed.error.issues.map((i) => (i.code === 'unrecognized_keys' ? `unknown key ${printable(i.keys.join(', '))}` : i.message)).join('; ');
    throw new InvalidInputError('decisions_invalid', `${display}:${line}: ${why}`);
  }
  const d: Decision = { decision: parsed.data.decision, source: 'decisions_file', line };
  if (parsed.data.feedback !== undefined) d.feedback = parsed.data.feedback;
  return d;
}

/** Every line of a decisions file, validated up front so a bad line fails before any work. */
export function parseDecisionFile(text: string, display: string): Array<{ line: number; decision: Decision }> {
  const out: Array<{ line: number; decision: Decision }> = [];
  text.split('\n').forEach((raw, i) => {
    const t = raw.trim();
    if (t !== '') out.push({ line: i + 1, decision: parseDecisionLine(t, i + 1, display) });
  });
  return out;
}

/**
 * Decisions from JSON lines, consumed in order (`--decisions FILE` or `-` for stdin). A word that
 * does not answer the menu asked (`extend` at an approval) is an error naming the line; when the
 * lines run out, the source says so once and the runner falls back to the headless rules.
 */
export class LineDecisionSource implements DecisionSource {
  readonly kind = 'decisions_file' as const;
  private lineNo = 0;
  private exhausted = false;
  private warnings: string[] = [];

  /** `next` yields raw lines (blank ones are skipped); `display` names the input in messages. */
  constructor(
    private readonly next: () => Promise<string | null>,
    private readonly display: string,
  ) {}

  async decide(req: DecisionRequest, _signal?: AbortSignal): Promise<Decision | null> {
    if (this.exhausted) return null;
    for (;;) {
      const raw = await this.next();
      if (raw === null) {
        this.exhausted = true;
        this.warnings.push(`${this.display}: no more decisions after line ${this.lineNo}; following the headless rules from now on`);
        return null;
      }
      this.lineNo++;
      if (raw.trim() === '') continue;
      const d = parseDecisionLine(raw.trim(), this.lineNo, this.display);
      const allowed = MENUS[req.prompt].map((o) => o.word);
      if (!allowed.includes(d.decision)) {
        throw new InvalidInputError(
          'decisions_invalid',
          `${this.display}:${this.lineNo}: "${d.decision}" does not answer the ${req.prompt.replace('_', ' ')} prompt of iteration ${req.iteration} (allowed: ${allowed.join(', ')})`,
        );
      }
      return d;
    }
  }

  takeWarnings(): string[] {
    return this.warnings.splice(0);
  }
}

/** A line reader over a fixed list of lines (a decisions file read up front). */
export function linesReader(lines: readonly string[]): () => Promise<string | null> {
  let i = 0;
  return () => Promise.resolve(i < lines.length ? (lines[i++] ?? null) : null);
}
