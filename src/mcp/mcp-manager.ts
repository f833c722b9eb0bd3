/**
 * The MCP servers of one navi process: all started in parallel (beside the store opening and
 * the model-info call), their tools defined once, and all stopped when the command ends. A
 * server that fails to start costs its own tools and a warning, never the run.
 */
import type { McpConfig } from '../config/mcp-schema.js';
import type { ToolDefinition } from '../tools/types.js';
import { defineMcpTool, type McpToolRef } from './mcp-tools.js';
import { ServerConnection, type ServerStatus } from './server-connection.js';

/** A `warning` event's payload. */
export interface McpWarning {
  code: string;
  message: string;
}

export interface StartMcpOptions {
  config: McpConfig;
  cwd: string;
  env: Record<string, string | undefined>;
  /** Directory of the stdio servers' stderr logs (under navi's data directory). */
  logDir: string;
  /** Only these servers (`navi mcp tools NAME`); default every enabled one. */
  only?: readonly string[];
}

export class McpManager {
  /** Warnings before anyone listens (start-up problems) are kept here, then handed to `onWarning`. */
  private pending: McpWarning[] = [];
  private listener: ((warning: McpWarning) => void) | undefined;
  private closed: Promise<void> | undefined;

  private constructor(
    private readonly connections: readonly ServerConnection[],
    /** Tools offered, in server order then the server's own order. */
    readonly definitions: readonly ToolDefinition[],
    readonly refs: readonly McpToolRef[],
  ) {}

  /** No servers: what a project without MCP gets, at no cost. */
  static empty(): McpManager {
    return new McpManager([], [], []);
  }

  /** Starts every enabled server, lists and defines their tools; resolves when each is ready or failed. */
  static async start(opts: StartMcpOptions): Promise<McpManager> {
    const early: McpWarning[] = [];
    // Until the manager exists, warnings queue with the start-up ones.
    const sink = { warn: (warning: McpWarning): void => void early.push(warning) };
    const entries = Object.entries(opts.config.servers).filter(
      ([name, server]) => server.enabled !== false && (opts.only === undefined || opts.only.includes(name)),
    );
    const connections = entries.map(
      ([name, server]) =>
        new ServerConnection({
          name,
          config: server,
          cwd: opts.cwd,
          env: opts.env,
          logDir: opts.logDir,
          startupTimeoutMs: opts.config.startup_timeout_s * 1000,
          callTimeoutMs: (server.timeout_s ?? opts.config.call_timeout_s) * 1000,
          onWarning: (code, message) => sink.warn({ code, message }),
        }),
    );
    await Promise.all(connections.map((c) => c.start()));
    const definitions: ToolDefinition[] = [];
    const refs: McpToolRef[] = [];
    const taken = new Set<string>();
    for (const connection of connections) {
      const status = connection.info();
      if (status.state !== 'ready') {
        early.push({ code: 'mcp_server_failed', message: `MCP server '${connection.name}' is not available: ${status.error ?? status.state}; its tools are not offered` });
        continue;
      }
      const problems = [...connection.toolProblems];
      for (const tool of connection.tools) {
        const defined = await defineMcpTool(connection, tool);
        if (typeof defined === 'string') {
          problems.push(defined);
          continue;
        }
        if (taken.has(defined.ref.name)) {
          problems.push(`tool '${tool.name}' is named ${defined.ref.name} like another tool of the server; not offered`);
          continue;
        }
        taken.add(defined.ref.name);
        definitions.push(defined.definition);
        refs.push(defined.ref);
      }
      for (const problem of problems) early.push({ code: 'mcp_tool_invalid', message: `MCP server '${connection.name}': ${problem}` });
    }
    const manager = new McpManager(connections, definitions, refs);
    manager.pending = early;
    sink.warn = (warning) => manager.warn(warning);
    return manager;
  }

  /** Servers and how they are doing, in configuration order. */
  statuses(): ServerStatus[] {
    return this.connections.map((c) => c.info());
  }

  /** Receives every warning: the ones from start-up at once, later ones as they happen. */
  onWarning(listener: (warning: McpWarning) => void): void {
    this.listener = listener;
    const pending = this.pending;
    this.pending = [];
    for (const warning of pending) listener(warning);
  }

  private warn(warning: McpWarning): void {
    if (this.listener) this.listener(warning);
    else this.pending.push(warning);
  }

  /** Stops every server (whole process groups); safe to call more than once. */
  close(): Promise<void> {
    this.closed ??= Promise.all(this.connections.map((c) => c.close())).then(() => undefined);
    return this.closed;
  }
}
