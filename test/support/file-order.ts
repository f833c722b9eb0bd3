/**
 * The order test files start in when vitest has no durations from a previous run (a fresh
 * checkout, CI after `npm ci`): vitest then starts the largest files first, but a file's size says
 * little about its time — a 10 KB scenario file that runs the built CLI twenty times takes longer
 * than a 40 KB table of pure cases. Started last, such a file leaves the other worker idle at
 * the end. So the files outside the logic tiers (`UNIT` in vitest.config.ts: the ones that run
 * the built CLI, open databases, spawn servers) go first, largest first, then the logic tiers.
 * Pure rules here; `sequencer.ts` applies them.
 */

/** A test file as the order sees it: its path from the repository root, its size in bytes. */
export interface OrderedFile {
  rel: string;
  size: number;
}

/**
 * Whether `rel` is matched by one of `patterns`, each either an exact path or `dir/**` + a
 * file-name glob with one `*` (`test/unit/**\/*.test.ts`): the only shapes vitest.config.ts uses.
 */
export function matchesPattern(rel: string, pattern: string): boolean {
  const deep = pattern.indexOf('/**/');
  if (deep < 0) return rel === pattern;
  const dir = pattern.slice(0, deep + 1);
  const [head = '', tail = ''] = pattern.slice(deep + 4).split('*');
  const name = rel.slice(rel.lastIndexOf('/') + 1);
  return rel.startsWith(dir) && name.length >= head.length + tail.length && name.startsWith(head) && name.endsWith(tail);
}

/** A logic-tier file: matched by `unit`, not by `notUnit`. */
export function isUnitFile(rel: string, unit: readonly string[], notUnit: readonly string[]): boolean {
  return unit.some((p) => matchesPattern(rel, p)) && !notUnit.some((p) => matchesPattern(rel, p));
}

/** The cold order: end-to-end files before logic-tier files, larger before smaller, then by path (stable). */
export function coldOrder<T extends OrderedFile>(files: readonly T[], unit: readonly string[], notUnit: readonly string[]): T[] {
  const tier = (f: OrderedFile): number => (isUnitFile(f.rel, unit, notUnit) ? 1 : 0);
  return [...files].sort((a, b) => tier(a) - tier(b) || b.size - a.size || (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
}
