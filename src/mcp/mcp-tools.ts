/**
 * MCP tools as navi tools: `mcp__<server>__<tool>`, the Ollama-safe form of the server's
 * `inputSchema` sent to the model, the server's own schema checked with ajv before a call, and
 * the result as text (failed when `isError`). A call that gets no result (server down, crashed,
 * timed out) is a failed tool result plus a `warning` event — never the end of the run.
 */
import type { ToolContext, ToolDefinition, ToolResult } from '../tools/types.js';
import { JsonSchemaCompiler, schemaFromCheck } from '../tools/json-schema.js';
import { ollamaSafeSchema } from './ollama-schema.js';
import { resultText } from './result-text.js';
import { McpCallError, type ListedTool, type ServerConnection } from './server-connection.js';

/** The prefix users know from other runners; `__` separates server and tool. */
export const MCP_TOOL_PREFIX = 'mcp__';

/** A description is part of every request: past this it crowds a small model's context. */
const MAX_DESCRIPTION_CHARS = 1024;

/** Where an offered MCP tool comes from (profiles select by server or `server/tool`). */
export interface McpToolRef {
  /** The name the model calls: `mcp__<server>__<tool>`. */
  name: string;
  server: string;
  /** The tool's name on its server. */
  tool: string;
}

/**
 * The name the model sees: letters, digits and `_` only, so it survives every renderer unchanged.
 * gpt-oss's harmony parser declares `-`, `.` and space as `_` and drops other characters
 * (harmony/harmonyparser.go 509-535, `convertToValidChars`), while the Go template still renders
 * earlier calls under the name navi sent: a `-` in a server or tool name would make the history
 * name a tool the model was never declared. The call goes to the server under the tool's own
 * name (`defineMcpTool` keeps it); a name two tools map to is offered once (mcp-manager.ts).
 */
export function mcpToolName(server: string, tool: string): string {
  return `${MCP_TOOL_PREFIX}${server.replace(/[^A-Za-z0-9_]/g, '_')}__${tool.replace(/[^A-Za-z0-9_]/g, '_')}`;
}

function describe(tool: ListedTool): string {
  const text = tool.description.trim().replace(/\s+\n/g, '\n');
  return text.length > MAX_DESCRIPTION_CHARS ? `${text.slice(0, MAX_DESCRIPTION_CHARS - 1)}…` : text;
}

/**
 * Lenient about keywords (servers write `examples`, vendor `x-` annotations, zod's output) but
 * not about invalid schemas: a tool whose schema ajv cannot compile is not offered.
 */
const compiler = new JsonSchemaCompiler({ strict: false });

/** A defined tool, or why the tool is not offered. */
export async function defineMcpTool(server: ServerConnection, tool: ListedTool): Promise<{ ref: McpToolRef; definition: ToolDefinition } | string> {
  const name = mcpToolName(server.name, tool.name);
  const compiled = await compiler.compile(tool.inputSchema);
  if (!compiled.ok) return `tool '${tool.name}' has an invalid inputSchema (${compiled.problem.replace(/^parameters/, 'inputSchema')}); not offered`;
  const definition: ToolDefinition = {
    name,
    description: describe(tool),
    schema: schemaFromCheck(compiled.check),
    parameters: ollamaSafeSchema(tool.inputSchema),
    async execute(args: unknown, ctx: ToolContext): Promise<ToolResult> {
      try {
        const result = await server.call(tool.name, args as Record<string, unknown>, ctx.signal);
        return resultText(result);
      } catch (err) {
        if (!(err instanceof McpCallError)) throw err;
        ctx.emit({ type: 'warning', code: err.code, message: err.message });
        return { ok: false, output: err.message };
      }
    },
  };
  return { ref: { name, server: server.name, tool: tool.name }, definition };
}
