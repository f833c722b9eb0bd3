/**
 * The `tools.shell` allow/deny policy (SPEC §10). Patterns are globs over one simple command;
 * a command line is split into its simple commands (`;`, `&&`, `||`, `|`, `&`, newlines,
 * subshells) and the bodies of `$(…)`, backticks, `<(…)`, `sh -c '…'` and `eval` are checked
 * recursively, so a denied command cannot ride along behind an allowed one.
 *
 * This is a guard against accidents by the model, not a sandbox: a determined script can still
 * build a command at run time (`$(printf …)`, variables) that no text check sees.
 */
import path from 'node:path';
import { parseCommandLine } from './shell-parse.js';

/** Denied unless the user's config says otherwise: commands that wreck the machine or shared history. */
export const DEFAULT_SHELL_DENY: readonly string[] = [
  // rm of the root or the home directory with any options before it (-rf, -r -f, -Rf,
  // --recursive --force, --), also as one of several operands.
  'rm * /',
  'rm * / *',
  'rm * /\\*',
  'rm * /\\* *',
  'rm * ~',
  'rm * ~ *',
  'rm * ~/',
  'rm * ~/\\*',
  'rm * $HOME',
  'rm * $HOME/',
  'rm * $HOME/\\*',
  'rm * ${HOME}',
  'rm * ${HOME}/',
  'rm * ${HOME}/\\*',
  'rm *--no-preserve-root*',
  'mkfs*',
  'dd * of=/dev/*',
  'shutdown*',
  'reboot*',
  'poweroff*',
  'halt',
  ':(){*',
  // Pushes that rewrite or replace shared history: --force (and --force-with-lease), -f, a
  // `+` refspec (forces that ref), --mirror.
  'git push --force*',
  'git push -f*',
  'git push * --force*',
  'git push * -f',
  'git push * -f *',
  'git push +*',
  'git push * +*',
  'git push --mirror*',
  'git push * --mirror*',
  'sudo',
  'sudo *',
  'su',
  'su *',
];

/** The pattern part of `ShellPolicy` (`tools.shell.allow` / `tools.shell.deny`). */
export interface ShellPolicyRules {
  /** Globs a simple command must match when non-empty (empty: everything not denied). */
  allow: readonly string[];
  /** Globs that refuse a simple command; deny wins over allow. */
  deny: readonly string[];
}

/** Verdict on a command: `matched` is the deny pattern hit, or the command no allow pattern matched. */
export type ShellCheck = { allowed: true } | { allowed: false; reason: string; matched: string };

/** `sh -c` bodies inside `sh -c` bodies…: deeper than this is refused rather than parsed. */
const MAX_NESTING = 8;

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'ash']);
/** Words that start or end a compound command; they are not commands themselves. */
const KEYWORDS = new Set(['if', 'then', 'else', 'elif', 'while', 'until', 'do', '!', '{', 'time']);
const CLOSERS = new Set(['fi', 'done', 'esac', '}']);
/** Commands that run their arguments as a command; stripped so `nohup rm -rf /` is seen as `rm -rf /`. */
const WRAPPERS = new Set(['env', 'nohup', 'command', 'builtin', 'exec', 'nice', 'timeout', 'stdbuf']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

const globCache = new Map<string, RegExp>();

/**
 * Compiles a policy glob: `*` any characters (spaces and `/` included), `?` one character,
 * `\x` a literal `x`; everything else literal. Whitespace runs match one space. Anchored.
 */
export function globToRegExp(glob: string): RegExp {
  const cached = globCache.get(glob);
  if (cached) return cached;
  let source = '';
  const normalized = glob.trim().replace(/\s+/g, ' ');
  for (let i = 0; i < normalized.length; i++) {
    const c = normalized.charAt(i);
    if (c === '*') source += '[\\s\\S]*';
    else if (c === '?') source += '[\\s\\S]';
    else if (c === '\\' && i + 1 < normalized.length) source += escapeRegExp(normalized.charAt(++i));
    else source += escapeRegExp(c);
  }
  const re = new RegExp(`^${source}$`);
  globCache.set(glob, re);
  return re;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Options of each wrapper that take a value (`-n 5`, `-n5`, `--adjustment=5`, `--adjustment 5`);
 * every other option is a flag. Skipping a value as if it were the command, or the command as
 * if it were a value, would hide the command from the policy, so each wrapper's are listed.
 * `script` options hold a command line of their own (`env -S 'cmd args'`), checked like an
 * `sh -c` body.
 */
interface WrapperOptions {
  short: string;
  long: readonly string[];
  script?: { short: string; long: string };
}

const WRAPPER_OPTIONS: Readonly<Record<string, WrapperOptions>> = {
  env: { short: 'uCS', long: ['unset', 'chdir', 'split-string'], script: { short: 'S', long: 'split-string' } },
  nice: { short: 'n', long: ['adjustment'] },
  timeout: { short: 'sk', long: ['signal', 'kill-after'] },
  stdbuf: { short: 'ioe', long: ['input', 'output', 'error'] },
  // bash's `exec -a NAME` (the name the command sees as $0).
  exec: { short: 'a', long: [] },
  nohup: { short: '', long: [] },
  command: { short: '', long: [] },
  builtin: { short: '', long: [] },
};

/** A single-quoted shell word holding `w` exactly. */
export function shellQuote(w: string): string {
  return `'${w.replace(/'/g, `'\\''`)}'`;
}

/**
 * Skips a wrapper's own options (and `timeout`'s duration) to reach the command it runs.
 * Returns the index of that command and, for `env -S STRING`, the command line env builds from
 * the string and the words after it.
 */
function skipWrapperArgs(name: string, words: string[], start: number): { next: number; script?: string } {
  const spec = WRAPPER_OPTIONS[name] ?? { short: '', long: [] };
  let i = start;
  /** env -S: the string is split into words that take the place of the option (options, then the command). */
  const splitString = (value: string, after: number): { next: number; script: string } => ({
    next: words.length,
    script: ['env', value, ...words.slice(after).map(shellQuote)].join(' '),
  });
  while (i < words.length) {
    const w = words[i] ?? '';
    if (w === '--') {
      i++;
      break;
    }
    if (name === 'env' && ASSIGNMENT.test(w)) {
      i++;
    } else if (w.startsWith('--') && w.length > 2) {
      // GNU long options may be abbreviated (`--split=…`, `--ch DIR`) and take `=value` or the next word.
      const eq = w.indexOf('=');
      const given = w.slice(2, eq === -1 ? undefined : eq);
      const full = spec.long.find((l) => l.startsWith(given));
      if (full !== undefined && spec.script?.long === full) {
        return eq === -1 ? splitString(words[i + 1] ?? '', i + 2) : splitString(w.slice(eq + 1), i + 1);
      }
      i += full !== undefined && eq === -1 ? 2 : 1;
    } else if (w.startsWith('-') && w.length > 1) {
      // A cluster of short options (`-iu NAME`, `-o0`, `-S'cmd'`): the first that takes a value
      // takes the rest of the word, or the next word when nothing is left.
      let took = 1;
      for (let k = 1; k < w.length; k++) {
        const opt = w.charAt(k);
        if (!spec.short.includes(opt)) continue;
        const rest = w.slice(k + 1);
        if (spec.script?.short === opt) return rest === '' ? splitString(words[i + 1] ?? '', i + 2) : splitString(rest, i + 1);
        took = rest === '' ? 2 : 1;
        break;
      }
      i += took;
    } else {
      break;
    }
  }
  if (name === 'timeout' && i < words.length) i++;
  return { next: i };
}

/**
 * The command a segment really runs: keywords, `VAR=x` prefixes and wrappers removed, path
 * dropped from the name; plus the command lines wrappers build from a string (`env -S`).
 */
function strippedWords(words: string[]): { words: string[]; scripts: string[] } {
  const scripts: string[] = [];
  let i = 0;
  for (;;) {
    const w = words[i];
    if (w === undefined) return { words: [], scripts };
    if (KEYWORDS.has(w) || ASSIGNMENT.test(w)) i++;
    else if (WRAPPERS.has(path.basename(w))) {
      const skipped = skipWrapperArgs(path.basename(w), words, i + 1);
      if (skipped.script !== undefined) scripts.push(skipped.script);
      i = skipped.next;
    } else break;
  }
  const rest = words.slice(i);
  if (rest[0]?.includes('/')) rest[0] = path.basename(rest[0]);
  return { words: rest, scripts };
}

/** The script a `sh -c BODY` or `eval ARGS` segment runs, if it is one. */
function innerScript(words: string[]): string | undefined {
  const name = words[0];
  if (name === 'eval') return words.slice(1).join(' ');
  if (name === undefined || !SHELLS.has(name)) return undefined;
  let sawC = false;
  for (let i = 1; i < words.length; i++) {
    const w = words[i] ?? '';
    if (w === '-o' || w === '+o') i++;
    else if (/^[-+][A-Za-z]+$/.test(w)) sawC ||= w.startsWith('-') && w.includes('c');
    else if (!/^--[A-Za-z-]*$/.test(w)) return sawC ? w : undefined;
  }
  return undefined;
}

function firstMatch(patterns: readonly string[], variants: readonly string[]): string | undefined {
  return patterns.find((p) => variants.some((v) => globToRegExp(p).test(v)));
}

function check(command: string, policy: ShellPolicyRules, depth: number): ShellCheck {
  if (depth > MAX_NESTING) {
    return { allowed: false, reason: 'command nesting is too deep to check', matched: command };
  }
  const whole = command.trim().replace(/\s+/g, ' ');
  const wholeDeny = firstMatch(policy.deny, [whole]);
  if (wholeDeny !== undefined) {
    return { allowed: false, reason: `'${whole}' matches deny pattern '${wholeDeny}'`, matched: wholeDeny };
  }
  const parsed = parseCommandLine(command);
  const inner: string[] = [...parsed.nested];
  for (const raw of parsed.raws) {
    const denied = firstMatch(policy.deny, [raw]);
    if (denied !== undefined) return { allowed: false, reason: `'${raw}' matches deny pattern '${denied}'`, matched: denied };
  }
  for (const words of parsed.segments) {
    const { words: stripped, scripts } = strippedWords(words);
    inner.push(...scripts);
    if (stripped.length === 0 || (stripped.length === 1 && CLOSERS.has(stripped[0] ?? ''))) continue;
    const variants = [words.join(' '), stripped.join(' ')];
    const shown = variants[0] ?? '';
    const denied = firstMatch(policy.deny, variants);
    if (denied !== undefined) return { allowed: false, reason: `'${shown}' matches deny pattern '${denied}'`, matched: denied };
    if (policy.allow.length > 0 && firstMatch(policy.allow, variants) === undefined) {
      return {
        allowed: false,
        reason: `'${shown}' matches no allow pattern (allowed: ${policy.allow.join(', ')})`,
        matched: shown,
      };
    }
    const script = innerScript(stripped);
    if (script !== undefined) inner.push(script);
  }
  for (const body of inner) {
    const verdict = check(body, policy, depth + 1);
    if (!verdict.allowed) return verdict;
  }
  return { allowed: true };
}

/**
 * Decides whether `command` may run under `policy`. Every simple command in it, including
 * those inside substitutions and `sh -c` bodies, must match no deny pattern and, when the
 * allow list is non-empty, some allow pattern.
 */
export function checkShellCommand(command: string, policy: ShellPolicyRules): ShellCheck {
  return check(command, policy, 0);
}
