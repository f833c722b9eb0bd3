/**
 * A project's `.mcp.json` (the file claude, cursor and others read): its `mcpServers` object is
 * navi's `mcp.servers`. Other keys of the file belong to other tools and are left alone.
 */

import { join } from 'node:path';
import { InvalidInputError } from '../errors.js';
import { isRecord } from '../util/guards.js';
import { readJsonFile } from './json-file.js';

/** The file's name in the working directory. */
export const MCP_JSON_FILE = '.mcp.json';

/** `mcpServers` of `<cwd>/.mcp.json` as a raw config layer (`{ mcp: { servers } }`), or undefined when absent. */
export function readMcpJson(cwd: string, display: string): Record<string, unknown> | undefined {
  return readMcpServersFile(join(cwd, MCP_JSON_FILE), display, true);
}

/** `mcpServers` of a file in `.mcp.json`'s format as a raw config layer; undefined when absent (and `optional`). */
export function readMcpServersFile(path: string, display: string, optional: boolean): Record<string, unknown> | undefined {
  const parsed = readJsonFile(path, display, 'config_invalid', optional);
  if (parsed === undefined) return undefined;
  if (!isRecord(parsed)) throw new InvalidInputError('config_invalid', `${display}: must be a JSON object with "mcpServers"`);
  const servers = parsed.mcpServers;
  if (servers === undefined) return undefined;
  return { mcp: { servers } };
}

/** A problem's key as the user wrote it in `.mcp.json` (`mcpServers.github.command`). */
export function mcpJsonKey(path: string): string {
  return path.replace(/^mcp\.servers/, 'mcpServers');
}
