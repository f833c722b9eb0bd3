/**
 * The message of a usage error (exit 2): what was wrong, the flag probably meant for a typo'd
 * one (yargs suggests commands, not flags), and the `--help` of the command at hand.
 */
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

/** Levenshtein distance (flags are short: the quadratic table is nothing). */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row.push(Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = row;
  }
  return prev[b.length] ?? 0;
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
      const meant = suggestFlag(name, ctx.flags);
      if (meant !== null) lines.push(`Did you mean ${dashed(meant)} (not ${dashed(name)})?`);
    }
  }
  lines.push(`Run 'navi ${ctx === null ? '' : `${ctx.path} `}--help' for usage.`);
  return lines.join('\n');
}
