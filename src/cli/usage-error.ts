/**
 * The message of a usage error (exit 2): what was wrong, the flag probably meant for a typo'd
 * one (yargs suggests commands, not flags), and the `--help` of the command at hand.
 */
import { foreignFlagHint } from './foreign-flags.js';
import type { CommandContext } from './help-layout.js';

/** Edit distance up to which a known flag counts as the one meant (`--max-iteration`, `--sesion`). */
const MAX_TYPO_DISTANCE = 2;

/** yargs lists an unknown `--foo-bar` twice (also as `fooBar`); name it once, as typed. */
export function dedupeUnknown(msg: string): string {
  const m = /^(Unknown arguments?): (.*)$/.exec(msg);
  if (!m) return msg;
  const names = (m[2] ?? '').split(', ');
  const kept = names.filter((n) => !(/[A-Z]/.test(n) && names.includes(n.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`))));
  return `${kept.length === 1 ? 'Unknown argument' : 'Unknown arguments'}: ${kept.map(dashed).join(', ')}`;
}

/**
 * Edit distance counting a swap of two neighbours as one edit (`modle` → `model`): the optimal
 * string alignment variant of Damerau-Levenshtein. Flags are short: the table is nothing.
 */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  const at = (i: number, j: number): number => d[i]?.[j] ?? 0;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      const row = d[i];
      if (row) row[j] = best;
    }
  }
  return at(a.length, b.length);
}

/** The known flag closest to `typed` (without dashes), or null when none is close. */
export function suggestFlag(typed: string, known: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const flag of known) {
    if (flag.length < 2) continue;
    const d = distance(typed, flag);
    // A short name is close to everything short: it needs a closer match.
    const limit = Math.min(MAX_TYPO_DISTANCE, Math.floor(flag.length / 3));
    if (d <= limit && d < bestDistance) {
      best = flag;
      bestDistance = d;
    }
  }
  return best;
}

/** `--name` as typed (one letter: `-n`). */
function dashed(name: string): string {
  return name.length === 1 ? `-${name}` : `--${name}`;
}

/** The full message for yargs' `msg` about the command `ctx` (null: the top level). */
export function usageMessage(msg: string, ctx: CommandContext | null): string {
  const lines = [dedupeUnknown(msg)];
  const unknown = /^Unknown arguments?: (.*)$/.exec(lines[0] ?? '');
  if (unknown && ctx !== null) {
    for (const name of (unknown[1] ?? '').split(', ').map((n) => n.replace(/^-+/, ''))) {
      const foreign = foreignFlagHint(name);
      if (foreign !== null) {
        lines.push(foreign);
        continue;
      }
      const meant = suggestFlag(name, ctx.flags);
      if (meant !== null) lines.push(`Did you mean ${dashed(meant)} (not ${dashed(name)})?`);
    }
  }
  lines.push(`Run 'navi ${ctx === null ? '' : `${ctx.path} `}--help' for usage.`);
  return lines.join('\n');
}
