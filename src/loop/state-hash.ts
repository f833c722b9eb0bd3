/**
 * The state hash behind stagnation detection (SPEC §7.8), byte-compatible with navigator's
 * stagnation_detector.calculate_state_hash, so hashes recorded by either tool compare equal.
 *
 * navigator computes `md5(json.dumps(state, sort_keys=True)).hexdigest()[:6]` over
 *   {"phase": P, "indicators": sorted([names of truthy indicators]), "files_changed": sorted(F),
 *    "error_state": E}
 * Note `indicators` is a sorted LIST of the met names, not an object. With Python's defaults the
 * canonical text is therefore exactly:
 *
 *   {"error_state": <E>, "files_changed": [<F sorted>], "indicators": [<met sorted>], "phase": "<P>"}
 *
 * - keys in that (sorted) order; separators `", "` between items and `": "` after keys;
 * - strings escaped as Python's `ensure_ascii=True` does: `\"` `\\` `\n` `\r` `\t` `\b` `\f`,
 *   every other character outside printable ASCII (0x20–0x7e) as `\uXXXX` in lowercase hex,
 *   characters above U+FFFF as a surrogate pair; `/` is not escaped;
 * - `error_state` is `null` or a string; lists sort by code point (Python's str order);
 * - MD5 over the UTF-8 bytes (all ASCII after escaping), first 6 lowercase hex digits.
 * Anchors: INIT/{}/[]/null → `9ea082`; IMPL/{code_committed}/[a.ts, b.ts]/null → `a0524c`.
 */

import { createHash } from 'node:crypto';
import type { CheckResult } from './evidence.js';
import type { IndicatorValues } from './indicators.js';

/** What the state hash covers. */
export interface StateHashInput {
  /** The iteration's phase (any string: navigator hashes whatever it is given). */
  phase: string;
  /** Indicator values; only the ones that are `true` are hashed (skipped and false alike are left out). */
  indicators: Partial<IndicatorValues> | Readonly<Record<string, boolean | 'skipped'>>;
  /** Files changed this iteration (any order; duplicates are kept, as navigator keeps them). */
  filesChanged: readonly string[];
  /** Digest of the failing checks' output (errorDigest), or null when nothing fails. */
  errorState: string | null;
}

/** A JSON string literal exactly as Python's json.dumps(ensure_ascii=True) writes it. */
export function pythonJsonString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += '\\\\';
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x0d) out += '\\r';
    else if (c === 0x09) out += '\\t';
    else if (c === 0x08) out += '\\b';
    else if (c === 0x0c) out += '\\f';
    // UTF-16 code units map one-to-one onto Python's \uXXXX escapes, surrogate pairs included.
    else if (c < 0x20 || c > 0x7e) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += s.charAt(i);
  }
  return `${out}"`;
}

/** Python's str ordering: by code point, which differs from JS's UTF-16 order above U+FFFF. */
function byCodePoint(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = (x[i]?.codePointAt(0) ?? 0) - (y[i]?.codePointAt(0) ?? 0);
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

function list(items: readonly string[]): string {
  return `[${[...items].sort(byCodePoint).map(pythonJsonString).join(', ')}]`;
}

/** The canonical JSON text the hash is taken over (see the module comment). */
export function canonicalStateJson(input: StateHashInput): string {
  const met = Object.entries(input.indicators)
    .filter(([, v]) => v === true)
    .map(([k]) => k);
  const error = input.errorState === null ? 'null' : pythonJsonString(input.errorState);
  return (
    `{"error_state": ${error}, "files_changed": ${list(input.filesChanged)}, ` +
    `"indicators": ${list(met)}, "phase": ${pythonJsonString(input.phase)}}`
  );
}

/** First 6 hex digits of MD5 over the canonical state JSON (navigator-compatible). */
export function stateHash(input: StateHashInput): string {
  return createHash('md5').update(canonicalStateJson(input), 'utf8').digest('hex').slice(0, 6);
}

/** Lines of a failing check's output that go into the digest; older lines are setup noise. */
const DIGEST_TAIL_LINES = 40;

/** Hex digits of the error digest: enough to tell failures apart, short enough to read. */
const DIGEST_HEX = 12;

/**
 * Volatile parts of test output replaced before digesting, so the same failure digests the
 * same on every run: colours, clock times, dates, durations, memory addresses, temp paths, PIDs.
 * Counts ("3 failed | 5 passed") are kept on purpose — they change when real progress is made.
 */
const VOLATILE: ReadonlyArray<readonly [RegExp, string]> = [
  // eslint-disable-next-line no-control-regex -- colour codes start with ESC; stripping them is the point
  [/\u001b\[[0-9;?]*[A-Za-z]/g, ''],
  [/\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/g, '<time>'],
  [/\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b/g, '<time>'],
  [/\b\d+(?:\.\d+)?\s?(?:ns|µs|us|ms|s|sec|secs|seconds?|m|min|mins|minutes?|h)\b/g, '<dur>'],
  // Durations named by their key rather than a unit: node --test's TAP (`duration_ms: 2.07`,
  // `# duration_ms 143.01`), JSON reporters (`"duration": 12`).
  [/\b(duration(?:_ms|_s)?|elapsed(?:_ms|_s)?|time_ms)(["']?\s*[:=]\s*|\s+)\d+(?:\.\d+)?/gi, '$1$2<n>'],
  [/\b0x[0-9a-fA-F]{6,}\b/g, '<addr>'],
  [/(?:\/tmp|\/var\/folders|\/private\/var)\/[^\s'":]+/g, '<tmp>'],
  [/\b(?:pid|PID)[ =:]+\d+/g, 'pid <n>'],
  [/[ \t]+$/gm, ''],
];

/** A check's output with volatile parts replaced and only the last lines kept. */
export function normalizeOutput(text: string): string {
  let out = text.replace(/\r\n?/g, '\n');
  for (const [pattern, replacement] of VOLATILE) out = out.replace(pattern, replacement);
  const lines = out.split('\n').filter((line) => line.trim() !== '');
  return lines.slice(-DIGEST_TAIL_LINES).join('\n');
}

/**
 * The `error_state` of the state hash: a short stable digest of the failing checks (name, exit
 * code, normalized output tail), or null when none fails. A different failure — or the same
 * test failing on a different line — gives a different digest, so real progress on a red
 * suite is not mistaken for stagnation.
 */
export function errorDigest(checks: readonly CheckResult[]): string | null {
  const failing = checks.filter((c) => c.exitCode !== 0);
  if (failing.length === 0) return null;
  const hash = createHash('sha256');
  for (const c of failing) {
    hash.update(`${c.name}\u0000${c.exitCode ?? 'unfinished'}\u0000${normalizeOutput(c.outputTail)}\u0000`);
  }
  return hash.digest('hex').slice(0, DIGEST_HEX);
}
