/**
 * The tool ceiling: a sub-agent or a switched-to profile never gets a tool that the agent
 * starting it does not have. Without it, `spawn_agent {"profile_id": "default"}` or
 * `switch_profile` would hand a read-only `researcher` the shell and the file writes.
 */

/** A profile's tool list limited to a ceiling: what is kept, and what is dropped. */
export interface CappedTools {
  kept: string[];
  dropped: string[];
}

/** `wanted` limited to `ceiling`, in `wanted`'s order; no ceiling keeps everything. */
export function capTools(wanted: readonly string[], ceiling: readonly string[] | undefined): CappedTools {
  if (ceiling === undefined) return { kept: [...wanted], dropped: [] };
  const allowed = new Set(ceiling);
  return { kept: wanted.filter((n) => allowed.has(n)), dropped: wanted.filter((n) => !allowed.has(n)) };
}

/** The clause a tool result carries when tools were dropped ('' when none were). */
export function droppedToolsNote(dropped: readonly string[]): string {
  if (dropped.length === 0) return '';
  return `without ${dropped.join(', ')}: a sub-agent or profile switch only gets tools you already have`;
}
