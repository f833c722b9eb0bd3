/**
 * The `mcp` block (MCP servers as tools): `mcp.servers` in `.nav-config.json` and the user file,
 * and the `mcpServers` object of a project's `.mcp.json` (the format claude and others read),
 * which the loader maps onto `mcp.servers`. A server is either a command navi starts and speaks
 * to over stdio, or the URL of a streamable HTTP endpoint.
 *
 * Values may reference environment variables as `${NAME}` or `${NAME:-default}` (expanded when
 * the server starts, never before: a header's secret is never part of the loaded configuration,
 * so nothing that stores or prints the configuration can leak it).
 */

import { z } from 'zod';
import { bool, positiveNumber, text, textList } from './fields.js';

/** Server names become part of tool names (`mcp__<server>__<tool>`): keep them plain. */
export const MCP_SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

const stringMap = (what: string) =>
  z.record(z.string(), z.string({ error: `must be a string (${what})` }), { error: `must be an object of ${what}` });

/** Settings any server may carry besides how to reach it. */
const common = {
  /** Ignored by navi when false (a server kept in the file but switched off). */
  enabled: bool().optional(),
  /** Longest one tool call may take, seconds (default `mcp.call_timeout_s`). */
  timeout_s: positiveNumber('seconds').optional(),
};

/** A server navi starts: `command` with `args`, in `cwd`, with `env` added to navi's environment. */
export const McpStdioServerSchema = z.strictObject({
  type: z.literal('stdio', { error: 'must be "stdio" for a server with a command' }).optional(),
  command: text(),
  args: textList().optional(),
  env: stringMap('environment variable values').optional(),
  /** Working directory of the server (absolute after loading; relative to the file that set it). */
  cwd: text().optional(),
  ...common,
});

/** A server navi connects to over streamable HTTP; `headers` are sent with every request. */
export const McpHttpServerSchema = z.strictObject({
  type: z.enum(['http', 'streamable-http', 'streamable_http'], { error: 'must be "http" for a server with a url (SSE-only servers are not supported)' }).optional(),
  url: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }),
  headers: stringMap('header values').optional(),
  ...common,
});

/** One server: which kind is decided by `command` or `url`, so the error names the right keys. */
export const McpServerSchema = z.custom<unknown>().transform((value, ctx) => {
  const record = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  if (!record || (record.command === undefined && record.url === undefined)) {
    ctx.addIssue({ code: 'custom', message: 'must be an object with "command" (a stdio server) or "url" (a streamable HTTP server)' });
    return z.NEVER;
  }
  if (record.command !== undefined && record.url !== undefined) {
    ctx.addIssue({ code: 'custom', message: 'has both "command" and "url"; a server is one or the other' });
    return z.NEVER;
  }
  const schema = record.command !== undefined ? McpStdioServerSchema : McpHttpServerSchema;
  const parsed = schema.safeParse(record);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        const allowed = Object.keys(schema.shape).join(', ');
        for (const key of issue.keys) ctx.addIssue({ code: 'custom', path: [...issue.path, key], message: `unknown key (allowed: ${allowed})` });
      } else {
        ctx.addIssue({ ...issue, path: issue.path });
      }
    }
    return z.NEVER;
  }
  return parsed.data;
});

export type McpStdioServerConfig = z.output<typeof McpStdioServerSchema>;
export type McpHttpServerConfig = z.output<typeof McpHttpServerSchema>;
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/** The `mcp` block. */
export const McpSchema = z.strictObject({
  /** Servers by name; the name is the `<server>` in `mcp__<server>__<tool>`. */
  servers: z
    .record(z.string(), McpServerSchema, { error: 'must be an object of servers by name' })
    .superRefine((servers, ctx) => {
      for (const name of Object.keys(servers)) {
        if (!MCP_SERVER_NAME.test(name)) {
          ctx.addIssue({ code: 'custom', path: [name], message: 'server names are letters, digits, "_" and "-", starting with a letter or digit' });
        }
      }
    })
    .default(() => ({})),
  /** Seconds a server has to start and list its tools before the run goes on without it. */
  startup_timeout_s: positiveNumber('seconds').default(30),
  /** Longest one tool call may take, seconds (a server's `timeout_s` overrides it). */
  call_timeout_s: positiveNumber('seconds').default(120),
});

export type McpConfig = z.output<typeof McpSchema>;
