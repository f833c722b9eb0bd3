/**
 * `navi mcp list` and `navi mcp tools [SERVER]`: start the configured MCP servers (no database,
 * no model), say how each is doing and what tools it offers, then stop them all. Also the MCP
 * check of `navi doctor`.
 */
import type { CliHost } from '../host.js';
import type { NaviConfig } from '../../config/schema.js';
import { EXIT, InvalidInputError } from '../../errors.js';
import type { McpManager } from '../../mcp/mcp-manager.js';
import type { ServerStatus } from '../../mcp/server-connection.js';
import type { GlobalArgs } from '../global-args.js';
import { startMcp } from '../mcp-runtime.js';
import { installStopHandlers } from '../os-signals.js';
import { setup } from '../setup.js';
import { terminalSafe } from '../terminal-text.js';

type Args = GlobalArgs & Record<string, unknown>;

const NONE_CONFIGURED = 'no MCP servers configured; add mcp.servers to .nav-config.json or mcpServers to .mcp.json (see README "MCP servers")';

/** How a server is reached, as configured (references like `${TOKEN}` unexpanded, headers never shown). */
function endpoint(config: NaviConfig, name: string): string {
  const server = config.mcp.servers[name];
  if (server === undefined) return '';
  return 'command' in server ? [server.command, ...(server.args ?? [])].join(' ') : server.url;
}

/** Starts the servers, runs `fn`, stops them; a signal stops them too and exits 130. */
async function withServers<T>(config: NaviConfig, cwd: string, env: Record<string, string | undefined>, only: readonly string[] | undefined, fn: (m: McpManager | null) => T): Promise<T> {
  let manager: McpManager | null = null;
  const stop = installStopHandlers(() => {
    void (manager?.close() ?? Promise.resolve()).finally(() => process.exit(EXIT.interrupted));
  });
  try {
    const started = startMcp(config, cwd, env, only);
    manager = await started;
    return fn(manager);
  } finally {
    stop.dispose();
    await manager?.close();
  }
}

interface ServerRow extends ServerStatus {
  enabled: boolean;
  endpoint: string;
}

function rows(config: NaviConfig, manager: McpManager | null): ServerRow[] {
  const started = new Map((manager?.statuses() ?? []).map((s) => [s.name, s]));
  return Object.entries(config.mcp.servers).map(([name, server]) => {
    const status = started.get(name) ?? { name, transport: 'command' in server ? 'stdio' : 'http', state: 'closed', toolCount: 0 };
    return { ...status, enabled: server.enabled !== false, endpoint: endpoint(config, name) };
  });
}

function rowJson(row: ServerRow): Record<string, unknown> {
  return {
    name: row.name,
    transport: row.transport,
    endpoint: row.endpoint,
    enabled: row.enabled,
    state: row.enabled ? row.state : 'disabled',
    tool_count: row.toolCount,
    ...(row.startMs !== undefined ? { start_ms: row.startMs } : {}),
    ...(row.error !== undefined ? { error: row.error } : {}),
    ...(row.serverInfo !== undefined ? { server_info: row.serverInfo } : {}),
    ...(row.logFile !== undefined ? { log_file: row.logFile } : {}),
  };
}

/** `navi mcp list`: each server, its state, tool count and start time. */
export async function mcpList(argv: Args, host: CliHost): Promise<number> {
  const { cwd, config, host: { env } } = setup(argv, host);
  const list = await withServers(config, cwd, env, undefined, (m) => rows(config, m));
  if (argv.output !== 'text') {
    host.stdout.write(`${JSON.stringify({ servers: list.map(rowJson) })}\n`);
    return 0;
  }
  if (list.length === 0) {
    host.stdout.write(`${NONE_CONFIGURED}\n`);
    return 0;
  }
  const width = Math.max(...list.map((r) => r.name.length), 6);
  host.stdout.write(`${'SERVER'.padEnd(width)}  TRANSPORT  STATE     TOOLS  START    ENDPOINT\n`);
  for (const r of list) {
    const json = rowJson(r);
    const start = r.startMs !== undefined ? `${r.startMs} ms` : '-';
    host.stdout.write(
      `${r.name.padEnd(width)}  ${r.transport.padEnd(9)}  ${String(json.state).padEnd(8)}  ${String(r.toolCount).padStart(5)}  ${start.padEnd(7)}  ${terminalSafe(r.endpoint)}\n`,
    );
    if (r.error !== undefined) host.stdout.write(`${' '.repeat(width)}  ${terminalSafe(r.error)}\n`);
  }
  return 0;
}

/** `navi mcp tools [SERVER]`: the tools as the model gets them (name, description, parameters). */
export async function mcpTools(argv: Args, host: CliHost): Promise<number> {
  const { cwd, config, host: { env } } = setup(argv, host);
  const only = typeof argv.server === 'string' ? [argv.server] : undefined;
  if (only !== undefined && config.mcp.servers[only[0] ?? ''] === undefined) {
    const configured = Object.keys(config.mcp.servers);
    throw new InvalidInputError('mcp_server_unknown', `no MCP server '${only[0] ?? ''}'; configured: ${configured.join(', ') || '(none)'}`);
  }
  const result = await withServers(config, cwd, env, only, (m) => {
    const warnings: string[] = [];
    m?.onWarning((w) => warnings.push(w.message));
    const refs = new Map((m?.refs ?? []).map((r) => [r.name, r]));
    const tools = (m?.definitions ?? []).map((d) => ({
      name: d.name,
      server: refs.get(d.name)?.server ?? '',
      tool: refs.get(d.name)?.tool ?? '',
      description: d.description,
      parameters: d.parameters ?? {},
    }));
    return { tools, warnings };
  });
  if (!argv.quiet) for (const w of result.warnings) host.stderr.write(`warning: ${terminalSafe(w)}\n`);
  if (argv.output !== 'text') {
    host.stdout.write(`${JSON.stringify({ tools: result.tools })}\n`);
    return 0;
  }
  if (Object.keys(config.mcp.servers).length === 0) {
    host.stdout.write(`${NONE_CONFIGURED}\n`);
    return 0;
  }
  for (const t of result.tools) {
    const params = Object.keys((t.parameters.properties ?? {})).join(', ');
    host.stdout.write(`${t.name}(${params})\n`);
    const first = t.description.split('\n')[0] ?? '';
    if (first !== '') host.stdout.write(`    ${terminalSafe(first)}\n`);
  }
  if (result.tools.length === 0) host.stdout.write('(no tools offered)\n');
  return 0;
}

/**
 * `navi doctor`'s MCP check: every enabled server started; passes when all are ready, else
 * names each failure and why.
 */
export async function mcpDoctorCheck(config: NaviConfig, cwd: string, env: Record<string, string | undefined>): Promise<{ ok: boolean; detail: string; warnings: string[] }> {
  const manager = await startMcp(config, cwd, env);
  try {
    if (manager === null) return { ok: true, detail: 'no servers configured', warnings: [] };
    const warnings: string[] = [];
    manager.onWarning((w) => {
      if (w.code !== 'mcp_server_failed') warnings.push(w.message);
    });
    const statuses = manager.statuses();
    const failed = statuses.filter((s) => s.state !== 'ready');
    const ready = statuses.filter((s) => s.state === 'ready').map((s) => `${s.name} (${s.toolCount} tools, ${s.startMs ?? 0} ms)`);
    if (failed.length > 0) {
      const why = failed.map((s) => `${s.name}: ${s.error ?? s.state}`).join('; ');
      return { ok: false, detail: `${failed.length} of ${statuses.length} failed: ${why}${ready.length > 0 ? `; ready: ${ready.join(', ')}` : ''}`, warnings };
    }
    return { ok: true, detail: `${statuses.length} ready: ${ready.join(', ')}`, warnings };
  } finally {
    await manager?.close();
  }
}
