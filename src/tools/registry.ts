/**
 * The tool registry: schemas for the request and execution of the model's calls. A bad call
 * (unknown tool, invalid JSON, schema mismatch, a tool that throws) becomes a failed result the
 * model reads and can correct, never an exception; only an abort propagates, so the run stops.
 */
import { z } from 'zod';
import { InvalidInputError, describeError, isAbortError } from '../errors.js';
import type { ToolSchema } from '../llm/types.js';
import { capText } from './output-cap.js';

/** Re-exported: the registry's cap, for callers that cap other text the same way. */
export { capText } from './output-cap.js';
import type { ToolContext, ToolDefinition, ToolResult } from './types.js';

/** Default cap on what one tool result adds to the model's context (~8k tokens). */
export const DEFAULT_TOOL_OUTPUT_BYTES = 32 * 1024;

/** Validation problems listed in a schema-mismatch result; more would only bury the first. */
const MAX_ISSUES = 4;

/** How a registry is built; the defaults suit the agent's requests. */
export interface ToolRegistryOptions {
  /** Bytes of a result kept for the model (head + tail). Default `DEFAULT_TOOL_OUTPUT_BYTES`. */
  maxOutputBytes?: number;
}

/** Removes what costs request bytes and tells the model nothing (`$schema`, safe-integer bounds). */
function compactSchema(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(compactSchema);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === '$schema') continue;
    if ((key === 'maximum' || key === 'minimum') && Math.abs(Number(child)) === Number.MAX_SAFE_INTEGER) continue;
    out[key] = compactSchema(child);
  }
  return out;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.length > 0 ? issue.path.map(String).join('.') : '(arguments)';
  let message = issue.message.replace(/^Invalid input: /, '');
  if (issue.code === 'invalid_type' && message.endsWith('received undefined')) message = 'required';
  if (issue.code === 'invalid_union') {
    const expected = issue.errors.flatMap((branch) =>
      branch.flatMap((sub) => (sub.code === 'invalid_type' && sub.path.length === 0 ? [sub.expected] : [])),
    );
    if (expected.length > 0) message = `expected ${expected.join(' or ')}`;
  }
  return `${where}: ${message}`;
}

/** One line per problem, at most a few: what the model needs to fix its call. */
export function describeZodError(error: z.ZodError): string {
  const shown = error.issues.slice(0, MAX_ISSUES).map(describeIssue);
  const more = error.issues.length - shown.length;
  return shown.join('; ') + (more > 0 ? `; and ${more} more` : '');
}

/** Registry of the tools a run can offer; built once per process, shared by agents and sub-agents. */
export class ToolRegistry {
  private readonly tools = new Map<string, ToolDefinition>();
  private readonly schemaCache = new Map<string, ToolSchema>();
  private readonly maxOutputBytes: number;

  constructor(definitions: readonly ToolDefinition[], options: ToolRegistryOptions = {}) {
    for (const def of definitions) {
      if (this.tools.has(def.name)) throw new Error(`tool '${def.name}' is defined twice`);
      this.tools.set(def.name, def);
    }
    this.maxOutputBytes = options.maxOutputBytes ?? DEFAULT_TOOL_OUTPUT_BYTES;
  }

  /** Every registered tool name, in registration order. */
  names(): string[] {
    return [...this.tools.keys()];
  }

  has(name: string): boolean {
    return this.tools.has(name);
  }

  /**
   * Function declarations for `names`, in that order. Each is built once and frozen, so the
   * request prefix stays byte-identical across calls (Ollama's KV cache depends on it).
   * Throws `InvalidInputError` (`unknown_tool`) for a name nobody registered: a profile error.
   */
  schemas(names: readonly string[]): ToolSchema[] {
    return names.map((name) => {
      const cached = this.schemaCache.get(name);
      if (cached) return cached;
      const def = this.tools.get(name);
      if (!def) {
        throw new InvalidInputError('unknown_tool', `unknown tool '${name}'; available: ${this.names().join(', ')}`);
      }
      const parameters = (def.parameters ?? compactSchema(z.toJSONSchema(def.schema, { io: 'input' }))) as Record<
        string,
        unknown
      >;
      const schema = deepFreeze<ToolSchema>({
        type: 'function',
        function: { name: def.name, description: def.description, parameters: structuredClone(parameters) },
      });
      this.schemaCache.set(name, schema);
      return schema;
    });
  }

  /**
   * Runs one call from the model. Never throws for the model's mistakes or a tool's failure;
   * rethrows aborts. The output is redacted, then capped.
   */
  async execute(
    name: string,
    rawArgs: unknown,
    ctx: ToolContext,
    allowed: ReadonlySet<string>,
  ): Promise<ToolResult> {
    const result = await this.run(name, rawArgs, ctx, allowed);
    return { ok: result.ok, output: capText(ctx.redact(result.output), this.maxOutputBytes) };
  }

  private async run(name: string, rawArgs: unknown, ctx: ToolContext, allowed: ReadonlySet<string>): Promise<ToolResult> {
    ctx.signal.throwIfAborted();
    const def = allowed.has(name) ? this.tools.get(name) : undefined;
    if (!def) {
      const available = this.names().filter((n) => allowed.has(n));
      return { ok: false, output: `unknown tool '${name}'; available: ${available.join(', ') || '(none)'}` };
    }
    let args: unknown = rawArgs ?? {};
    if (typeof args === 'string') {
      // Models often send "" for a call without arguments.
      if (args.trim() === '') args = {};
      else {
        try {
          args = JSON.parse(args);
        } catch (err) {
          return { ok: false, output: `invalid JSON arguments for '${name}': ${describeError(err)}` };
        }
      }
    }
    const parsed = def.schema.safeParse(args);
    if (!parsed.success) {
      return { ok: false, output: `invalid arguments for '${name}': ${describeZodError(parsed.error)}` };
    }
    try {
      return await def.execute(parsed.data, { ...ctx, outputLimitBytes: this.maxOutputBytes });
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) throw err;
      return { ok: false, output: `tool '${name}' failed: ${describeError(err)}` };
    }
  }
}
