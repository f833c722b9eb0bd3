/**
 * Ollama releases older than a fix navi relies on, and what goes wrong before it (audit
 * ollama-wire-2026-12 D16, §3; commits and first releases from `git tag --contains`). `navi
 * doctor` warns with these: the run still works, but not as well.
 */
import type { ThinkValue } from './types.js';

export type Version = readonly [number, number, number];

interface KnownIssue {
  /** Versions from this one (inclusive; absent: all older) … */
  from?: Version;
  /** … up to this one (exclusive) have the issue; this is the first release with the fix. */
  fixedIn: Version;
  /** Only when the configuration asks for the feature. */
  applies?: (think: ThinkValue) => boolean;
  /** What happens, after "Ollama X " (the fix and the advice are added). */
  what: string;
}

const KNOWN_ISSUES: readonly KnownIssue[] = [
  {
    // 122c68c15 (v0.17.7): levels accepted for every model; before, a 400 except on harmony models.
    fixedIn: [0, 17, 7],
    applies: (think) => typeof think === 'string',
    what: 'refuses a think level (llm.think "low" | "medium" | "high") on every model but gpt-oss with HTTP 400 (set llm.think to true)',
  },
  {
    // 35fa277fa (v0.30.1): v0.30.0 (llama-server only) counted newly processed tokens alone.
    from: [0, 30, 0],
    fixedIn: [0, 30, 1],
    what: "reports only the uncached part of the prompt as prompt_eval_count, so navi's token counts and context budget read low",
  },
  {
    // 32a97b749 (v0.31.0): the tools parser counted braces inside JSON strings.
    fixedIn: [0, 31, 0],
    what: 'ends a tool call at a "}" or "]" inside a string argument, so code in tool arguments leaks out as text (models whose tool tag is "{" or "[")',
  },
  {
    // e0c95a5ff (v0.32.15): a parser error mid-stream no longer wedges chat and generate.
    fixedIn: [0, 32, 15],
    what: "wedges the model runner when a parser error happens mid-stream with thinking on, so navi's retry of a malformed tool call waits out the first-chunk timeout and the run ends with exit 75",
  },
];

/** a < b, component by component. */
export function versionBefore(a: Version, b: Version): boolean {
  for (let i = 0; i < 3; i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d < 0;
  }
  return false;
}

/** One line per known issue of this server version that applies to the configuration. */
export function serverVersionWarnings(version: Version, shown: string, think: ThinkValue): string[] {
  const out: string[] = [];
  for (const issue of KNOWN_ISSUES) {
    if (!versionBefore(version, issue.fixedIn)) continue;
    if (issue.from !== undefined && versionBefore(version, issue.from)) continue;
    if (issue.applies !== undefined && !issue.applies(think)) continue;
    out.push(`Ollama ${shown} ${issue.what}; fixed in ${issue.fixedIn.join('.')}: upgrade Ollama (https://ollama.com/download)`);
  }
  return out;
}
