/**
 * `loop_signal {type: "exit", success, reason}` (SPEC §8): how the model tells the loop runner
 * it believes the task is done. Registered for loop runs only (never for `navi run`). The tool
 * itself decides nothing: it acknowledges, and the runner reads the call from the iteration's
 * events and weighs it against the evidence at the exit gate.
 */
import { z } from 'zod';
import { defineTool } from '../tools/define-tool.js';
import type { ToolDefinition } from '../tools/types.js';
import { LOOP_SIGNAL_TOOL } from './exit-signal.js';

export const loopSignalTool = defineTool({
  name: LOOP_SIGNAL_TOOL,
  description:
    'Loop mode: signal that the task is complete, after verifying it with tools in this same turn. ' +
    'The runner accepts it only when its own evidence (checks, git, changed files) agrees.',
  schema: z.object({
    type: z.literal('exit').describe('always "exit"'),
    success: z.boolean().describe('true: the task is complete; false: it is not'),
    reason: z.string().describe('one sentence: what was done and how it was verified'),
    code_simplified: z.boolean().optional().describe('true when you simplified the code for clarity'),
  }),
  execute: (args, ctx) => {
    // Loops never nest: a sub-agent inside a loop has no loop of its own to end.
    const path = ctx.agentPath ?? [];
    if (path.length > 1) {
      return Promise.resolve({ ok: false, output: 'loop_signal is only for the loop\'s main agent; report your result in your answer instead' });
    }
    return Promise.resolve({
      ok: true,
      output: args.success
        ? 'Recorded. The runner decides after this iteration whether the evidence supports exiting.'
        : 'Recorded as not complete; the loop continues.',
    });
  },
});

/** The loop-only tools, to register beside the built-ins for a loop run. */
export function loopTools(): ToolDefinition[] {
  return [loopSignalTool] as ToolDefinition[];
}
