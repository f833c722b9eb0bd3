/**
 * Which MCP tools a profile offers (`tools.mcp` in its config.json): a server name offers all
 * of that server's tools, `server/tool` one tool (by its name on the server), `*` every
 * server's. Absent, a profile offers every configured server's tools; `[]` offers none.
 */
import type { McpToolRef } from './mcp-tools.js';

/** Every server's tools. */
export const ALL_MCP_SERVERS = '*';

/** Tool names `selection` picks from `refs`, in `refs` order (server order, then the server's). */
export function selectMcpTools(selection: readonly string[] | undefined, refs: readonly McpToolRef[]): string[] {
  if (selection === undefined || selection.includes(ALL_MCP_SERVERS)) return refs.map((r) => r.name);
  const servers = new Set<string>();
  const tools = new Set<string>();
  for (const entry of selection) {
    const slash = entry.indexOf('/');
    if (slash === -1) servers.add(entry);
    else tools.add(entry);
  }
  return refs.filter((r) => servers.has(r.server) || tools.has(`${r.server}/${r.tool}`)).map((r) => r.name);
}

/** Servers a selection names that are not configured (a profile error, exit 2). */
export function unknownMcpServers(selection: readonly string[] | undefined, configured: ReadonlySet<string>): string[] {
  if (selection === undefined) return [];
  const named = selection.filter((e) => e !== ALL_MCP_SERVERS).map((e) => (e.includes('/') ? e.slice(0, e.indexOf('/')) : e));
  return [...new Set(named.filter((server) => !configured.has(server)))];
}
