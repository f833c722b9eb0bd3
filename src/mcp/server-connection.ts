/**
 * One configured MCP server for the length of a run: started (stdio) or reached (streamable
 * HTTP) through the official SDK client, its tools listed once, its calls made with a timeout
 * and the run's AbortSignal, and closed with its whole process group. A server that crashes is
 * started again on the next call (a bounded number of times); its tool list stays the one
 * listed at start (SPEC §8 prefix stability).
 */
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { McpServerConfig } from '../config/mcp-schema.js';
import { describeError } from '../errors.js';
import { isRecord } from '../util/guards.js';
import { expandEnv, expandMap } from './expand-env.js';
import { ProcessGroupStdioTransport } from './stdio-transport.js';

/** navi's name and version in `initialize`. */
const CLIENT_INFO = { name: 'navi', version: '0.1.0' };

/** Restarts after a crash per run: a server that keeps crashing is left down, and its calls fail. */
const MAX_RESTARTS = 2;

/** How long closing waits for an HTTP server to end its session. */
const HTTP_GOODBYE_MS = 500;

/** Pages of `tools/list` read; a server paginating past this is broken, not big. */
const MAX_LIST_PAGES = 50;

/**
 * Variables a stdio server gets from navi's environment besides its own `env`: the SDK's safe
 * list (`DEFAULT_INHERITED_ENV_VARS` of its stdio client: HOME, LOGNAME, PATH, SHELL, TERM, USER;
 * not imported, as that module pulls in cross-spawn) plus locale, temp dir and proxies. Not the
 * rest: navi's environment holds its own secrets (DATABASE_URL, tokens) that a third-party
 * server has no business reading; a server that needs one names it in `env` (`"TOKEN": "${TOKEN}"`).
 */
const INHERITED = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TMPDIR', 'TZ', 'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy', 'NODE_EXTRA_CA_CERTS'];

/** `tools/list` read leniently: one malformed tool must not cost the server all its tools. */
const ToolListSchema = z.looseObject({ tools: z.array(z.unknown()).default([]), nextCursor: z.string().optional() });
/** `tools/call` read leniently; `resultText` makes sense of the content. */
const CallResultSchema = z.looseObject({});

/** A tool as the server listed it (only what navi uses). */
export interface ListedTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export type ServerState = 'starting' | 'ready' | 'failed' | 'crashed' | 'closed';

/** How a server is doing, for `navi mcp list`, `navi doctor` and warnings. */
export interface ServerStatus {
  name: string;
  transport: 'stdio' | 'http';
  state: ServerState;
  /** Why it failed or crashed. */
  error?: string;
  /** Milliseconds from start to a listed set of tools. */
  startMs?: number;
  /** Tools it listed (before navi's own checks). */
  toolCount: number;
  /** Where a stdio server's stderr goes. */
  logFile?: string;
  /** `serverInfo` from `initialize`. */
  serverInfo?: { name: string; version: string };
}

/** A call that did not produce a result: the message the model and the warning event carry. */
export class McpCallError extends Error {
  constructor(
    message: string,
    readonly code: 'mcp_server_unavailable' | 'mcp_call_timeout' | 'mcp_server_crashed' | 'mcp_call_failed',
  ) {
    super(message);
  }
}

export interface ServerConnectionOptions {
  name: string;
  config: McpServerConfig;
  /** navi's working directory (the default cwd of a stdio server). */
  cwd: string;
  env: Record<string, string | undefined>;
  /** Directory of the servers' stderr logs. */
  logDir: string;
  startupTimeoutMs: number;
  callTimeoutMs: number;
  /** Something worth a `warning` event happened outside a call (a crash, a tool list change). */
  onWarning: (code: string, message: string) => void;
}

function stdioEnv(config: { env?: Record<string, string> }, env: Record<string, string | undefined>): Record<string, string | undefined> {
  const base: Record<string, string | undefined> = {};
  // A value starting with `()` is an exported shell function, which the SDK refuses to pass on too.
  for (const name of INHERITED) if (env[name] !== undefined && !env[name].startsWith('()')) base[name] = env[name];
  return { ...base, ...expandMap(config.env, env, 'env') };
}

function listedTool(raw: unknown): ListedTool | string {
  if (!isRecord(raw) || typeof raw.name !== 'string' || raw.name === '') return 'a tool without a name';
  const description = typeof raw.description === 'string' ? raw.description : typeof raw.title === 'string' ? raw.title : '';
  if (!isRecord(raw.inputSchema)) return `tool '${raw.name}': inputSchema is not an object`;
  return { name: raw.name, description, inputSchema: raw.inputSchema };
}

/** Settles like `promise` or rejects after `ms` with `message`. */
async function within<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error(message)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export class ServerConnection {
  readonly name: string;
  private client: Client | undefined;
  private transport: Transport | undefined;
  private readonly status: ServerStatus;
  private listed: ListedTool[] = [];
  /** Problems with individual tools at listing (skipped tools). */
  readonly toolProblems: string[] = [];
  private restarts = 0;
  private closing = false;
  private restarting: Promise<void> | undefined;
  private listChangeReported = false;
  /** Calls waiting for an answer: a crash during one is reported by the call, not twice. */
  private inFlight = 0;

  constructor(private readonly opts: ServerConnectionOptions) {
    this.name = opts.name;
    const stdio = 'command' in opts.config;
    this.status = {
      name: opts.name,
      transport: stdio ? 'stdio' : 'http',
      state: 'starting',
      toolCount: 0,
      ...(stdio ? { logFile: path.join(opts.logDir, `${opts.name}.log`) } : {}),
    };
  }

  get tools(): readonly ListedTool[] {
    return this.listed;
  }

  info(): ServerStatus {
    return { ...this.status };
  }

  /** Starts the server and lists its tools; never throws (a failure is the `failed` state). */
  async start(): Promise<void> {
    const started = performance.now();
    try {
      const tools = await within(this.connect(), this.opts.startupTimeoutMs, `did not start within ${this.opts.startupTimeoutMs / 1000} s`);
      this.listed = tools;
      this.status.toolCount = tools.length;
      this.status.state = 'ready';
      this.status.startMs = Math.round(performance.now() - started);
    } catch (err) {
      this.status.state = 'failed';
      this.status.error = this.failureReason(err);
      await this.dropConnection();
    }
  }

  private failureReason(err: unknown): string {
    const exit = this.transport instanceof ProcessGroupStdioTransport ? this.transport.exit : undefined;
    const message = describeError(err);
    const log = this.status.logFile !== undefined ? `; its stderr is in ${this.status.logFile}` : '';
    if (exit !== undefined && (/closed|not running/i.test(message) || exit.includes(message))) return `the server ${exit}${log}`;
    return `${message}${exit !== undefined ? ` (the server ${exit})` : ''}${log}`;
  }

  private createTransport(): Transport {
    const { config, env } = this.opts;
    if ('command' in config) {
      return new ProcessGroupStdioTransport({
        command: expandEnv(config.command, env, 'command'),
        args: (config.args ?? []).map((arg, i) => expandEnv(arg, env, `args[${i}]`)),
        cwd: config.cwd ?? this.opts.cwd,
        env: stdioEnv(config, env),
        logFile: this.status.logFile ?? path.join(this.opts.logDir, `${this.name}.log`),
      });
    }
    const headers = expandMap(config.headers, env, 'headers');
    return new StreamableHTTPClientTransport(new URL(expandEnv(config.url, env, 'url')), { requestInit: { headers } });
  }

  private async connect(): Promise<ListedTool[]> {
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    const transport = this.createTransport();
    this.client = client;
    this.transport = transport;
    client.onerror = () => undefined;
    client.onclose = () => this.onClosed(client);
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.onListChanged());
    await client.connect(transport, { timeout: this.opts.startupTimeoutMs });
    const info = client.getServerVersion();
    if (info) this.status.serverInfo = { name: info.name, version: info.version };
    return this.listTools(client);
  }

  private async listTools(client: Client): Promise<ListedTool[]> {
    const tools: ListedTool[] = [];
    this.toolProblems.length = 0;
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await client.request(
        { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
        ToolListSchema,
        { timeout: this.opts.startupTimeoutMs },
      );
      for (const raw of result.tools) {
        const tool = listedTool(raw);
        if (typeof tool === 'string') this.toolProblems.push(tool);
        else tools.push(tool);
      }
      cursor = result.nextCursor;
      if (cursor === undefined) break;
    }
    return tools;
  }

  private onClosed(client: Client): void {
    if (this.closing || client !== this.client) return;
    const wasReady = this.status.state === 'ready';
    this.status.state = 'crashed';
    const exit = this.transport instanceof ProcessGroupStdioTransport ? this.transport.exit : undefined;
    this.status.error = `the server ${exit ?? 'closed the connection'}`;
    if (wasReady && this.inFlight === 0) {
      const log = this.status.logFile !== undefined ? ` (stderr: ${this.status.logFile})` : '';
      this.opts.onWarning('mcp_server_crashed', `MCP server '${this.name}' stopped: ${this.status.error}${log}; it is started again on its next call`);
    }
  }

  private onListChanged(): void {
    if (this.listChangeReported) return;
    this.listChangeReported = true;
    this.opts.onWarning(
      'mcp_tools_changed',
      `MCP server '${this.name}' changed its tool list; this run keeps the tools it listed at start (restart navi to use the new list)`,
    );
  }

  /** A crashed server is started again (once at a time, at most MAX_RESTARTS per run). */
  private async ensureRunning(): Promise<Client> {
    if (this.status.state === 'crashed' && this.restarts < MAX_RESTARTS) {
      this.restarting ??= this.restart().finally(() => {
        this.restarting = undefined;
      });
      await this.restarting;
    }
    if (this.status.state !== 'ready' || !this.client) {
      const why = this.status.error !== undefined ? `: ${this.status.error}` : '';
      throw new McpCallError(`MCP server '${this.name}' is not available${why}`, 'mcp_server_unavailable');
    }
    return this.client;
  }

  private async restart(): Promise<void> {
    this.restarts++;
    await this.dropConnection();
    const before = JSON.stringify(this.listed);
    this.status.state = 'starting';
    try {
      const tools = await within(this.connect(), this.opts.startupTimeoutMs, `did not start within ${this.opts.startupTimeoutMs / 1000} s`);
      this.status.state = 'ready';
      delete this.status.error;
      if (JSON.stringify(tools) !== before) this.onListChanged();
    } catch (err) {
      this.status.state = 'crashed';
      this.status.error = `restart failed: ${this.failureReason(err)}`;
      await this.dropConnection();
    }
  }

  /**
   * Calls `tool` with `args`. Resolves with the raw result (`isError` included); rejects with
   * the run's abort reason when `signal` fires, else with an `McpCallError` the model can read.
   */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal, timeoutMs = this.opts.callTimeoutMs): Promise<Record<string, unknown>> {
    const client = await this.ensureRunning();
    this.inFlight++;
    try {
      return await client.request({ method: 'tools/call', params: { name: tool, arguments: args } }, CallResultSchema, { signal, timeout: timeoutMs });
    } catch (err) {
      signal.throwIfAborted();
      const message = describeError(err);
      if (/timed out/i.test(message)) {
        throw new McpCallError(`MCP server '${this.name}' did not answer ${tool} within ${timeoutMs / 1000} s (the call was cancelled)`, 'mcp_call_timeout');
      }
      if (this.status.state === 'crashed' || /connection closed/i.test(message)) {
        const log = this.status.logFile !== undefined ? `; its stderr is in ${this.status.logFile}` : '';
        const next = this.restarts < MAX_RESTARTS ? '; it is started again on the next call' : '';
        throw new McpCallError(`MCP server '${this.name}' crashed during ${tool}: ${this.status.error ?? message}${log}${next}`, 'mcp_server_crashed');
      }
      throw new McpCallError(`MCP server '${this.name}' refused ${tool}: ${message}`, 'mcp_call_failed');
    } finally {
      this.inFlight--;
    }
  }

  private async dropConnection(): Promise<void> {
    const client = this.client;
    const transport = this.transport;
    this.client = undefined;
    this.transport = undefined;
    try {
      // An HTTP server keeps a session per client until told otherwise (DELETE); bounded, as a
      // server that went away must not hold up navi's exit.
      if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
        await within(transport.terminateSession(), HTTP_GOODBYE_MS, 'no answer').catch(() => undefined);
      }
      if (client) await client.close();
      else if (transport) await transport.close();
    } catch {
      // Already gone.
    }
  }

  /** Stops the server (its whole process group) and forgets the connection. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.status.state !== 'failed') this.status.state = 'closed';
    await this.dropConnection();
  }
}
