/**
 * The CLI's side of MCP servers: where their logs go, starting them (the SDK is imported only
 * when a server is configured: a project without MCP pays nothing), checking a profile's
 * `tools.mcp`, and turning their warnings into `warning` events.
 */
import path from 'node:path';
import type { NaviConfig } from '../config/schema.js';
import { InvalidInputError } from '../errors.js';
import { expandEnv } from '../mcp/expand-env.js';
import type { McpManager } from '../mcp/mcp-manager.js';
import { unknownMcpServers } from '../mcp/select.js';
import type { Profile } from '../profiles/types.js';
import { defaultDataDir } from '../store/open.js';
import type { Output } from './output.js';

/**
 * Servers' stderr logs: `mcp-logs/` beside the embedded database's directory (by default
 * `~/.local/share/navi/mcp-logs`): under navi's data directory, never inside PGlite's own.
 */
export function mcpLogDir(config: NaviConfig, env: Record<string, string | undefined>): string {
  const dataDir = config.db.data_dir ?? defaultDataDir(env);
  return path.join(path.dirname(dataDir), 'mcp-logs');
}

/** True when some server is configured and not switched off. */
export function hasMcpServers(config: NaviConfig): boolean {
  return Object.values(config.mcp.servers).some((s) => s.enabled !== false);
}

/** Starts the enabled servers (null when there are none); never rejects for a server's failure. */
export async function startMcp(
  config: NaviConfig,
  cwd: string,
  env: Record<string, string | undefined>,
  only?: readonly string[],
): Promise<McpManager | null> {
  if (!hasMcpServers(config)) return null;
  const { McpManager: Manager } = await import('../mcp/mcp-manager.js');
  return Manager.start({ config: config.mcp, cwd, env, logDir: mcpLogDir(config, env), ...(only ? { only } : {}) });
}

/** A profile naming a server the configuration does not have is a profile error (exit 2). */
export function checkProfileMcp(profile: Profile, config: NaviConfig): void {
  const unknown = unknownMcpServers(profile.settings.tools.mcp, new Set(Object.keys(config.mcp.servers)));
  if (unknown.length === 0) return;
  const configured = Object.keys(config.mcp.servers);
  throw new InvalidInputError(
    'profile_invalid',
    `${profile.dir}/config.json: tools.mcp: unknown MCP server${unknown.length === 1 ? '' : 's'} ${unknown.join(', ')}; configured: ${configured.join(', ') || '(none: add mcp.servers to .nav-config.json or mcpServers to .mcp.json)'}`,
  );
}

/**
 * Warnings from the servers (start-up failures at once, crashes and tool-list changes as they
 * happen) as `warning` events. Called once the output knows the session, so every event has it.
 */
export function reportMcpWarnings(mcp: McpManager | null, output: Output): void {
  mcp?.onWarning((w) => output.event({ type: 'warning', code: w.code, message: w.message }));
}

/**
 * Secrets the servers' settings hold, as variables the redactor knows: a server's `env` values
 * under their own names, header values (always secret) under a name marking them so. Expanded
 * from the environment as the servers get them.
 */
export function mcpSecretEnv(config: NaviConfig, env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  const expand = (value: string): string => {
    try {
      return expandEnv(value, env, '');
    } catch {
      return ''; // not set: the server will not start, and there is nothing to redact
    }
  };
  for (const [server, settings] of Object.entries(config.mcp.servers)) {
    if ('env' in settings) for (const [name, value] of Object.entries(settings.env ?? {})) out[name] = expand(value);
    if ('headers' in settings) {
      for (const [name, value] of Object.entries(settings.headers ?? {})) {
        // Only the credential part of `Bearer abc…` is secret; redacting "Bearer" would mangle prose.
        const secret = expand(value).replace(/^(?:Bearer|Basic|Token)\s+/i, '');
        out[`MCP_${server}_${name}_SECRET`.replace(/[^A-Za-z0-9_]/g, '_')] = secret;
      }
    }
  }
  return out;
}
