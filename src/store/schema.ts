/**
 * The drizzle schema shared by PGlite and PostgreSQL (SPEC §9). `drizzle-kit generate` reads this
 * file to write the SQL migrations in `drizzle/`; change it, then regenerate and commit both.
 *
 * Column names are spelled out in snake_case so the SQL does not depend on a casing setting.
 */
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  type AnyPgColumn,
} from 'drizzle-orm/pg-core';
import type { ChatRole } from '../llm/types.js';
import type { ScratchpadEntry, TodoItem } from '../tools/types.js';
import type { SessionKind } from './types.js';

const SESSION_KINDS = ['chat', 'subagent', 'loop'] as const satisfies readonly SessionKind[];
const CHAT_ROLES = ['system', 'user', 'assistant', 'tool'] as const satisfies readonly ChatRole[];

/** Rejects a role outside `ChatRole`: a bad row would break every later request of the session. */
const roleCheck = (role: AnyPgColumn) => sql`${role} in ('system', 'user', 'assistant', 'tool')`;

/** Timestamps are stored with their zone so rows written from different machines compare right. */
const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
const updatedAt = () => timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();

/** One conversation: a chat, a sub-agent run (child of its parent) or a loop run's session. */
export const sessions = pgTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    kind: text('kind', { enum: SESSION_KINDS }).notNull(),
    profile: text('profile').notNull(),
    cwd: text('cwd').notNull(),
    parentId: text('parent_id').references((): AnyPgColumn => sessions.id, { onDelete: 'cascade' }),
    title: text('title').notNull().default(''),
    model: text('model').notNull().default(''),
    // bigint: an overnight loop can add up more tokens than an int4 holds.
    promptTokens: bigint('prompt_tokens', { mode: 'number' }).notNull().default(0),
    completionTokens: bigint('completion_tokens', { mode: 'number' }).notNull().default(0),
    // Last seq used in `messages` / `context`. Appends take the next one with an UPDATE of this
    // row, whose row lock orders concurrent writers (two processes on one session) correctly,
    // where `max(seq) + 1` would make them collide and retry.
    messageSeq: integer('message_seq').notNull().default(0),
    contextSeq: integer('context_seq').notNull().default(0),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    check('sessions_kind_check', sql`${t.kind} in ('chat', 'subagent', 'loop')`),
    // Listings sort by recency; the cascade from a parent looks children up by parent_id.
    index('sessions_updated_at_idx').on(t.updatedAt.desc(), t.id.desc()),
    index('sessions_parent_id_idx').on(t.parentId),
  ],
);

/**
 * The display buffer: every message as it happened, never compressed.
 * `tool_calls` is JSON kept as text, not jsonb: jsonb reorders object keys, and the calls are
 * re-sent to the model byte for byte (prefix stability, SPEC §8).
 */
export const messages = pgTable(
  'messages',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    role: text('role', { enum: CHAT_ROLES }).notNull(),
    content: text('content').notNull(),
    thinking: text('thinking'),
    toolCalls: text('tool_calls'),
    toolName: text('tool_name'),
    isPlan: boolean('is_plan').notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [
    check('messages_role_check', roleCheck(t.role)),
    // Also the index behind `max(seq)` on append and the ordered read: no scan as history grows.
    uniqueIndex('messages_session_seq_idx').on(t.sessionId, t.seq),
  ],
);

/** The model's view of a session; replaced as a whole when it is compressed. */
export const context = pgTable(
  'context',
  {
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    role: text('role', { enum: CHAT_ROLES }).notNull(),
    content: text('content').notNull(),
    /** JSON text, byte-stable (see `messages.tool_calls`). */
    toolCalls: text('tool_calls'),
    toolName: text('tool_name'),
  },
  (t) => [
    check('context_role_check', roleCheck(t.role)),
    primaryKey({ name: 'context_pkey', columns: [t.sessionId, t.seq] }),
  ],
);

/** The todo list of a session (the `todo` tool and the plan). */
export const todos = pgTable('todos', {
  sessionId: text('session_id')
    .primaryKey()
    .references(() => sessions.id, { onDelete: 'cascade' }),
  items: jsonb('items').$type<TodoItem[]>().notNull(),
  updatedAt: updatedAt(),
});

/** The scratchpad of a session (notes, findings, errors that re-plans pack). */
export const scratchpad = pgTable('scratchpad', {
  sessionId: text('session_id')
    .primaryKey()
    .references(() => sessions.id, { onDelete: 'cascade' }),
  entries: jsonb('entries').$type<ScratchpadEntry[]>().notNull(),
  updatedAt: updatedAt(),
});

/** Every table, for `drizzle(client, { schema })`. */
export const schema = { sessions, messages, context, todos, scratchpad };

/** The schema's type, for the database handle the repositories take. */
export type NaviSchema = typeof schema;
