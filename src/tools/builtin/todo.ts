import { z } from 'zod';
import { defineTool } from '../define-tool.js';
import type { TodoItem, TodoStatus } from '../types.js';

const STATUS = z.enum(['pending', 'in_progress', 'done']);

const MARK: Record<TodoStatus, string> = { done: '[x]', in_progress: '[~]', pending: '[ ]' };

/** `[x] 1. text`, one line per item: the compact view the model and the CLI both read. */
export function renderTodos(items: readonly TodoItem[]): string {
  if (items.length === 0) return '(todo list is empty)';
  return items
    .map((t) => `${MARK[t.status]} ${t.id}. ${t.text}${t.validation ? ` (validated: ${t.validation})` : ''}`)
    .join('\n');
}

/**
 * `todo {action, ...}`: the session's step list. One flat argument object rather than a union
 * per action: its JSON schema is about half the size, and each action checks its own fields.
 */
export const todoTool = defineTool({
  name: 'todo',
  description: 'Step list. set{items}, add{text}, update{id,status,validation?}, list, clear.',
  schema: z.object({
    action: z.enum(['set', 'add', 'update', 'list', 'clear']),
    items: z.array(z.union([z.string(), z.object({ text: z.string(), status: STATUS.optional() })])).optional(),
    text: z.string().optional(),
    id: z.coerce.number().int().optional(),
    status: STATUS.optional(),
    validation: z.string().optional(),
  }),
  async execute(args, ctx) {
    const current = await ctx.state.getTodos(ctx.todoSessionId ?? ctx.sessionId);
    let next: TodoItem[];
    switch (args.action) {
      case 'list':
        return { ok: true, output: renderTodos(current) };
      case 'clear':
        next = [];
        break;
      case 'set':
        if (!args.items) return { ok: false, output: "todo set needs 'items' (list of step texts)" };
        next = args.items.map((item, i) =>
          typeof item === 'string'
            ? { id: i + 1, text: item, status: 'pending' }
            : { id: i + 1, text: item.text, status: item.status ?? 'pending' },
        );
        break;
      case 'add': {
        if (!args.text?.trim()) return { ok: false, output: "todo add needs 'text'" };
        const id = current.reduce((max, t) => Math.max(max, t.id), 0) + 1;
        next = [...current, { id, text: args.text, status: 'pending' }];
        break;
      }
      case 'update': {
        const target = current.find((t) => t.id === args.id);
        if (args.id === undefined || !target) {
          const ids = current.map((t) => t.id).join(', ') || 'none';
          return { ok: false, output: `todo update needs 'id' of an existing step (ids: ${ids})` };
        }
        if (!args.status && args.text === undefined) return { ok: false, output: "todo update needs 'status'" };
        const validation = args.validation?.trim() || undefined;
        if (ctx.stepValidation && args.status === 'done' && !validation && !target.validation) {
          return {
            ok: false,
            output: `step validation is on: marking step ${target.id} done needs 'validation' saying how you verified it (command run, output seen)`,
          };
        }
        const updated: TodoItem = {
          ...target,
          ...(args.status ? { status: args.status } : {}),
          ...(args.text !== undefined ? { text: args.text } : {}),
          ...(validation ? { validation } : {}),
        };
        next = current.map((t) => (t.id === target.id ? updated : t));
        break;
      }
    }
    await ctx.state.setTodos(ctx.todoSessionId ?? ctx.sessionId, next);
    ctx.emit({ type: 'todo_updated', todos: next });
    return { ok: true, output: renderTodos(next) };
  },
});
