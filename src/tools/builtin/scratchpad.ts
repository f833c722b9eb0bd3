import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import type { ScratchpadEntry } from '../types.js';

/** Longest value kept: notes are packed into re-plan prompts, so they must stay notes. */
const MAX_VALUE_CHARS = 8000;

function renderEntry(e: ScratchpadEntry): string {
  return `[${e.kind}] ${e.key}: ${e.value}`;
}

/** `scratchpad {action, key?, value?, kind?}`: named notes, findings and errors kept for the session. */
export const scratchpadTool = defineTool({
  name: 'scratchpad',
  description: 'Session notes. write{key,value,kind?}, read{key?}, delete{key}, list.',
  schema: z.object({
    action: z.enum(['write', 'read', 'delete', 'list']),
    key: z.string().optional(),
    value: z.string().optional(),
    kind: z.enum(['note', 'finding', 'error']).optional(),
  }),
  async execute(args, ctx) {
    const entries = await ctx.state.getScratchpad(ctx.sessionId);
    const key = args.key?.trim();
    switch (args.action) {
      case 'list':
        if (entries.length === 0) return { ok: true, output: '(scratchpad is empty)' };
        return { ok: true, output: entries.map((e) => `${e.key} (${e.kind}, ${e.value.length} chars)`).join('\n') };
      case 'read': {
        if (!key) {
          return { ok: true, output: entries.length > 0 ? entries.map(renderEntry).join('\n') : '(scratchpad is empty)' };
        }
        const entry = entries.find((e) => e.key === key);
        return entry ? { ok: true, output: renderEntry(entry) } : { ok: false, output: `no scratchpad entry '${key}'` };
      }
      case 'write': {
        if (!key || args.value === undefined) return { ok: false, output: "scratchpad write needs 'key' and 'value'" };
        if (args.value.length > MAX_VALUE_CHARS) {
          return { ok: false, output: `value is ${args.value.length} chars; keep notes under ${MAX_VALUE_CHARS}` };
        }
        const entry: ScratchpadEntry = { key, value: args.value, kind: args.kind ?? 'note' };
        const exists = entries.some((e) => e.key === key);
        const next = exists ? entries.map((e) => (e.key === key ? entry : e)) : [...entries, entry];
        await ctx.state.setScratchpad(ctx.sessionId, next);
        return { ok: true, output: `${exists ? 'updated' : 'saved'} ${renderEntry(entry)}` };
      }
      case 'delete': {
        if (!key) return { ok: false, output: "scratchpad delete needs 'key'" };
        if (!entries.some((e) => e.key === key)) return { ok: false, output: `no scratchpad entry '${key}'` };
        await ctx.state.setScratchpad(
          ctx.sessionId,
          entries.filter((e) => e.key !== key),
        );
        return { ok: true, output: `deleted '${key}'` };
      }
    }
  },
});
