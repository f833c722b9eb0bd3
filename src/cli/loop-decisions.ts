/**
 * The loop's decision sources as the CLI builds them: a person at a terminal (numbered menus on
 * stderr, read from stdin — only when both are terminals and CI is unset), or `--decisions
 * FILE|-` (JSON lines; a file is validated whole before the run starts, stdin line by line as
 * decisions are needed). Ctrl-C at a menu stops the run like anywhere else.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { describeError, InvalidInputError } from '../errors.js';
import {
  LineDecisionSource,
  linesReader,
  MENUS,
  parseDecisionFile,
  type Decision,
  type DecisionRequest,
  type DecisionSource,
} from '../loop/decisions.js';
import { blockListsOptions } from './loop-text.js';
import { terminalSafe } from './terminal-text.js';

/** Asks one line on stderr; null when the signal fires or input ends. */
function question(rl: Interface, prompt: string, signal: AbortSignal): Promise<string | null> {
  return new Promise((done) => {
    if (signal.aborted) return done(null);
    const onAbort = (): void => done(null);
    signal.addEventListener('abort', onAbort, { once: true });
    rl.question(prompt, (answer) => {
      signal.removeEventListener('abort', onAbort);
      done(answer);
    });
  });
}

/** The option an answer picks: its number, its label or word, or a unique prefix of one. */
export function pickOption(prompt: DecisionRequest['prompt'], answer: string, defaultIndex: number | null): Decision['decision'] | null {
  const menu = MENUS[prompt];
  const a = answer.trim().toLowerCase();
  if (a === '') return defaultIndex === null ? null : (menu[defaultIndex]?.word ?? null);
  const n = Number(a);
  if (Number.isInteger(n) && n >= 1 && n <= menu.length) return menu[n - 1]?.word ?? null;
  const matches = menu.filter((o) => o.label.toLowerCase().startsWith(a) || o.word.startsWith(a));
  return matches.length === 1 ? (matches[0]?.word ?? null) : null;
}

/**
 * Menus on the terminal. In text mode the runner's `approval_requested` event has already shown
 * the block and the options on stdout; in json modes stdout is for JSON, so they are shown here.
 */
export function terminalDecisions(opts: { echoMenu: boolean }): DecisionSource {
  const open = (): Interface => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    // Ctrl-C inside readline: hand it to the stop handlers (they abort the run's signal).
    rl.on('SIGINT', () => process.kill(process.pid, 'SIGINT'));
    return rl;
  };
  return {
    kind: 'terminal',
    async decide(req, signal) {
      const menu = MENUS[req.prompt];
      if (opts.echoMenu) {
        const lines = [req.block, req.question, ...(blockListsOptions(req.block) ? [] : menu.map((o, i) => `  ${i + 1}. [${o.label}]`))].filter((l): l is string => l !== undefined);
        process.stderr.write(`${terminalSafe(lines.join('\n'))}\n`);
      }
      // Only the approval menus have a default: Continue (Finish) is what "accept this iteration" means.
      const defaultIndex = req.prompt === 'approval' || req.prompt === 'completion' ? 0 : null;
      const hint = `Choose 1-${menu.length}${defaultIndex === null ? '' : ` [${defaultIndex + 1}]`}: `;
      const rl = open();
      try {
        for (;;) {
          const answer = await question(rl, hint, signal);
          if (answer === null) return null;
          const word = pickOption(req.prompt, answer, defaultIndex);
          if (word === null) {
            process.stderr.write(`Please answer ${menu.map((o, i) => `${i + 1} (${o.label})`).join(', ')}.\n`);
            continue;
          }
          const d: Decision = { decision: word, source: 'terminal' };
          if (word === 'adjust') {
            const label = req.prompt === 'stagnation' ? "What's blocking, or what should change?" : 'Feedback for the next iteration:';
            const feedback = await question(rl, `${label} `, signal);
            if (feedback === null) return null;
            d.feedback = feedback.trim();
          }
          return d;
        }
      } finally {
        rl.close();
      }
    },
    async answerQuestion(q, signal) {
      const rl = open();
      try {
        process.stderr.write(`\nThe model asked: ${terminalSafe(q)}\n`);
        const answer = await question(rl, 'Your answer (empty: let it pick the safest option): ', signal);
        return answer === null || answer.trim() === '' ? null : answer.trim();
      } finally {
        rl.close();
      }
    },
  };
}

/** `--decisions FILE`: read and validated now (a bad line is exit 2 before any work). */
export function fileDecisions(path: string, cwd: string): DecisionSource {
  let text: string;
  try {
    text = readFileSync(resolve(cwd, path), 'utf8');
  } catch (err) {
    throw new InvalidInputError('decisions_invalid', `--decisions ${path}: cannot read it (${describeError(err)})`);
  }
  parseDecisionFile(text, path);
  return new LineDecisionSource(linesReader(text.split('\n')), path);
}

/** `--decisions -`: lines from stdin, read only when a decision is needed. */
export function stdinDecisions(): DecisionSource {
  const rl = createInterface({ input: process.stdin, terminal: false, crlfDelay: Infinity });
  const lines = rl[Symbol.asyncIterator]();
  let ended = false;
  return new LineDecisionSource(async () => {
    if (ended) return null;
    const step = await lines.next();
    if (step.done === true) {
      ended = true;
      rl.close();
      return null;
    }
    return step.value;
  }, 'stdin');
}
