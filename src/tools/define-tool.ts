import type { z } from 'zod';
import type { ToolDefinition } from './types.js';

/** Identity helper that infers `execute`'s argument type from the tool's zod schema. */
export function defineTool<S extends z.ZodType>(definition: ToolDefinition<S>): ToolDefinition<S> {
  return definition;
}
