/**
 * `--allowed-tools` / `--disallowed-tools`: one run's narrowing of its profile's tools. Only
 * narrowing: a profile decides what an agent may ever hold (README "Security": `researcher`
 * stays read-only), so a name the profile does not offer is a usage error, never a grant. What
 * is filtered out here is also out of reach of sub-agents and `switch_profile` (the turn's tool
 * ceiling is built from this list).
 */
import type { ToolFilter } from './agent-types.js';

/** The profile's tools (in its order) that the filter keeps. */
export function filterTools(names: readonly string[], filter: ToolFilter | undefined): string[] {
  if (filter === undefined) return [...names];
  const only = filter.only === undefined ? undefined : new Set(filter.only);
  const except = new Set(filter.except ?? []);
  return names.filter((n) => (only === undefined || only.has(n)) && !except.has(n));
}

/** Names in the filter that the profile does not offer (a typo, or a tool of another profile). */
export function unknownFilterNames(names: readonly string[], filter: ToolFilter): string[] {
  const offered = new Set(names);
  return [...new Set([...(filter.only ?? []), ...(filter.except ?? [])])].filter((n) => !offered.has(n));
}

/** `read_file,list_dir` or `read_file list_dir` (repeatable flag): the names, once each. */
export function parseToolList(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  const parts = (Array.isArray(value) ? value : [value]).flatMap((v) => String(v).split(/[\s,]+/));
  return [...new Set(parts.filter((p) => p.length > 0))];
}
