/**
 * `navi "prompt"` as a shorthand for `navi run "prompt"` (as `codex "…"`, `gemini "…"`), and what
 * navi does with an invocation that names no command. Decided before yargs loads, so the
 * shorthand takes `navi run`'s fast path too.
 *
 * The rules (README "Commands"):
 * - no arguments at all: help, exit 0 (SPEC §3);
 * - `--help`, `--version`, or a first positional that is a command: as given;
 * - a first positional that is not a command: a prompt, run as `navi run …` — unless it is one
 *   bare word that looks like a mistyped command (`navi sesions list`): exit 2 with "Did you
 *   mean", rather than sending the typo to a model with a shell (a quoted prompt is never one);
 * - a lone word that is not a sentence (`navi status`, `navi ls`; issue 18 item 9): exit 2,
 *   "quote it or use navi run" (`navi version` prints the version);
 * - options but no positional (`navi -p "summarise x"`, `navi -o json`): exit 2. `-p` is navi's
 *   `--profile`; claude's `-p/--print` and gemini's `-p/--prompt` mean "run this prompt", so a CI
 *   job copied from them fails loudly with the command to use, instead of printing help and
 *   "passing" (issue 11).
 */
import { InvalidInputError } from '../errors.js';
import { valueFlagSpellings } from './flags.js';

/** Every top-level command (and `help`, which yargs reads as `--help`). */
export const COMMANDS = ['run', 'loop', 'tasks', 'runs', 'sessions', 'profiles', 'memory', 'mcp', 'db', 'doctor', 'init', 'completion', 'serve'] as const;

/** Options (of any command) that take a value, so the word after them is not a positional (flags.ts). */
const VALUE_OPTIONS = valueFlagSpellings();

/** Mistyped commands are at most this many edits away (`sesions`, `doctr`, `tsks`). */
const TYPO_DISTANCE = 2;

/** What to hand to the parser: the arguments (maybe with `run` in front). Throws exit 2. */
export function expandShorthand(args: readonly string[]): string[] {
  if (args.length === 0) return [...args];
  const first = firstPositional(args);
  if (first === undefined) {
    if (args.some((a) => a === '--help' || a === '-h' || a === '--version' || a === '-V')) return [...args];
    throw new InvalidInputError('usage', noCommandMessage(args));
  }
  const word = args[first] ?? '';
  // After `--` every word is the prompt's, even one spelled like a command.
  if (args[first - 1] === '--') return ['run', ...args];
  if (word === 'help') return [...args.slice(0, first), '--help', ...args.slice(first + 1)];
  if ((COMMANDS as readonly string[]).includes(word)) return [...args];
  const meant = mistypedCommand(word);
  if (meant !== undefined) {
    throw new InvalidInputError(
      'usage',
      `unknown command '${word}'. Did you mean ${meant}? (A prompt that starts with this word: quote it, navi ${quote(args.slice(first).join(' '))}, or use navi run.)`,
    );
  }
  if (positionalCount(args) === 1 && !isPromptLike(word)) {
    // `navi version` is what scripts try first: answer it rather than refuse it.
    if (word === 'version') return ['--version'];
    throw new InvalidInputError('usage', loneWordMessage(word));
  }
  return ['run', ...args];
}

/**
 * A lone argument that reads as a prompt: words with spaces between them, or a sentence's end
 * (`navi "why?"`). One bare word (`navi status`, `navi ls`) is far more often a command navi
 * does not have than a prompt, and a prompt runs a model with a shell.
 */
export function isPromptLike(word: string): boolean {
  return /\s/.test(word.trim()) || /\p{L}[?!.]$/u.test(word);
}

/** How many positional arguments `args` holds (words after `--` included). */
export function positionalCount(args: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? '';
    if (a === '--') return count + (args.length - i - 1);
    if (a.startsWith('-') && a !== '-') {
      if (!a.includes('=') && VALUE_OPTIONS.has(a)) i++;
      continue;
    }
    count++;
  }
  return count;
}

function loneWordMessage(word: string): string {
  const shown = quote(word);
  const task = /\.ya?ml$/i.test(word) || word.includes('/') ? ` A task file runs with: navi loop ${shown}.` : '';
  return (
    `unknown command ${shown}, and one word is not taken as a prompt: quote it or use navi run ${shown} ` +
    `(a prompt is a sentence in quotes: navi "…").${task}\nCommands: ${COMMANDS.join(', ')}. See: navi --help`
  );
}

/** Index of the first positional argument, or undefined. */
export function firstPositional(args: readonly string[]): number | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? '';
    if (a === '--') return i + 1 < args.length ? i + 1 : undefined;
    if (a.startsWith('-') && a !== '-') {
      if (!a.includes('=') && VALUE_OPTIONS.has(a)) i++;
      continue;
    }
    return i;
  }
  return undefined;
}

function noCommandMessage(args: readonly string[]): string {
  const profileAt = args.findIndex((a) => a === '-p' || a === '--profile');
  const value = profileAt >= 0 ? args[profileAt + 1] : undefined;
  if (value !== undefined && !value.startsWith('-')) {
    return (
      `no command and no prompt: -p is navi's --profile (here '${value}'), not claude's -p/--print or gemini's -p/--prompt.\n` +
      `To run a prompt: navi ${quote(value)}  (or: navi run ${quote(value)}; with a profile: navi -p coder ${quote(value)})`
    );
  }
  return `no command and no prompt in: ${args.join(' ')}\nTo run a prompt: navi "PROMPT" (or navi run "PROMPT"); commands: ${COMMANDS.join(', ')}. See: navi --help`;
}

function quote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The command a bare word a couple of edits from one most likely meant: a typo, not a prompt. */
export function mistypedCommand(word: string): string | undefined {
  if (word.length < 3 || /\s/.test(word)) return undefined;
  const lower = word.toLowerCase();
  let best: { command: string; distance: number } | undefined;
  for (const c of COMMANDS) {
    const distance = editDistance(lower, c);
    if (distance <= TYPO_DISTANCE && (best === undefined || distance < best.distance)) best = { command: c, distance };
  }
  return best?.command;
}

/** Levenshtein distance (small inputs: a word against a command name). */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row.push(Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost));
    }
    prev = row;
  }
  return prev[b.length] ?? 0;
}
