/**
 * The drizzle schema shared by PGlite and PostgreSQL (SPEC §9). `drizzle-kit generate` reads this
 * file to write the SQL migrations in `drizzle/`; change it, then regenerate and commit both.
 *
 * Column names are spelled out in snake_case so the SQL does not depend on a casing setting.
 */
import { sql, type SQL } from 'drizzle-orm';
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
import type { ArchiveReason, LoopRunStatus, MemorySource, SessionKind } from './types.js';

const SESSION_KINDS = ['chat', 'subagent', 'loop'] as const satisfies readonly SessionKind[];
const CHAT_ROLES = ['system', 'user', 'assistant', 'tool'] as const satisfies readonly ChatRole[];
const ARCHIVE_REASONS = ['preturn', 'midturn', 'postturn', 'manual'] as const satisfies readonly ArchiveReason[];
const MEMORY_SOURCES = ['tool', 'extraction'] as const satisfies readonly MemorySource[];
const LOOP_RUN_STATUSES = [
  'running',
  'completed',
  'incomplete',
  'aborted',
  'budget_exhausted',
  'interrupted',
  'failed',
] as const satisfies readonly LoopRunStatus[];

/** `column in (...)` for a check constraint over a fixed list of values. */
const oneOf = (column: AnyPgColumn, values: readonly string[]) =>
  sql`${column} in (${sql.raw(values.map((v) => `'${v}'`).join(', '))})`;

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
    /** For role `tool`: the id of the call this result answers (Ollama's `tool_call_id`). */
    toolCallId: text('tool_call_id'),
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
    /**
     * The assistant's reasoning, sent back on every later request: some templates render every
     * turn's thinking (GLM-4.7, Cohere, Nemotron), so dropping it re-renders the whole history.
     */
    thinking: text('thinking'),
    /** JSON text, byte-stable (see `messages.tool_calls`). */
    toolCalls: text('tool_calls'),
    toolName: text('tool_name'),
    toolCallId: text('tool_call_id'),
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

/**
 * What compression replaced (SPEC §8): the summary that took its place and the replaced context
 * messages as JSON text, so a compression can be inspected or undone later.
 */
export const compressionArchives = pgTable(
  'compression_archives',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    reason: text('reason', { enum: ARCHIVE_REASONS }).notNull(),
    summary: text('summary').notNull(),
    /** JSON text of the replaced `ChatMessage[]`, byte-stable (see `messages.tool_calls`). */
    messages: text('messages').notNull(),
    tokensBefore: integer('tokens_before').notNull(),
    tokensAfter: integer('tokens_after').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    check('compression_archives_reason_check', oneOf(t.reason, ARCHIVE_REASONS)),
    index('compression_archives_session_idx').on(t.sessionId, t.id),
  ],
);

/**
 * Long-term memory per user (`remember` / `forget`). Memories outlive the session that wrote
 * them: deleting it only clears `session_id`.
 */
export const memories = pgTable(
  'memories',
  {
    /** Short id users type in `forget` / `navi memory forget` (`m_` + 8 base36 characters). */
    id: text('id').primaryKey(),
    // Insertion order for listings: created_at has only millisecond resolution on PGlite.
    seq: bigint('seq', { mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
    userId: text('user_id').notNull(),
    fact: text('fact').notNull(),
    // Uniqueness is over a digest: a btree entry over the fact itself fails above ~2.7 kB.
    factMd5: text('fact_md5')
      .notNull()
      .generatedAlwaysAs((): SQL => sql`md5(${memories.fact})`),
    source: text('source', { enum: MEMORY_SOURCES }).notNull(),
    sessionId: text('session_id').references(() => sessions.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
  },
  (t) => [
    check('memories_source_check', oneOf(t.source, MEMORY_SOURCES)),
    // Remembering the same fact twice returns the first record (ON CONFLICT on this index).
    uniqueIndex('memories_user_fact_idx').on(t.userId, t.factMd5),
    index('memories_user_seq_idx').on(t.userId, t.seq),
    index('memories_session_idx').on(t.sessionId),
  ],
);

/** Planning debug data of a session (the `plan` tool), capped at the most recent 20. */
export const planningLogs = pgTable(
  'planning_logs',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    /** JSON text, byte-stable. */
    data: text('data').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('planning_logs_session_idx').on(t.sessionId, t.id)],
);

/**
 * One `navi loop` run (SPEC §7): what it runs, its effective configuration and the counters a
 * resumed run restores. JSON columns are text (byte-stable; the task is shown as loaded).
 */
export const loopRuns = pgTable(
  'loop_runs',
  {
    id: text('id').primaryKey(),
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    taskName: text('task_name').notNull(),
    task: text('task').notNull(),
    config: text('config').notNull(),
    cwd: text('cwd').notNull(),
    status: text('status', { enum: LOOP_RUN_STATUSES }).notNull().default('running'),
    reason: text('reason'),
    /** The last completed iteration (0 before the first one commits). */
    iteration: integer('iteration').notNull().default(0),
    maxIterations: integer('max_iterations').notNull(),
    stagnationCount: integer('stagnation_count').notNull().default(0),
    /** JSON text array of state hashes. */
    hashHistory: text('hash_history').notNull().default('[]'),
    diversifications: integer('diversifications').notNull().default(0),
    promptTokens: bigint('prompt_tokens', { mode: 'number' }).notNull().default(0),
    completionTokens: bigint('completion_tokens', { mode: 'number' }).notNull().default(0),
    maxTokens: bigint('max_tokens', { mode: 'number' }),
    deadlineAt: timestamp('deadline_at', { withTimezone: true, mode: 'date' }),
    gitHeadAtStart: text('git_head_at_start'),
    startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    updatedAt: updatedAt(),
    finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    check('loop_runs_status_check', oneOf(t.status, LOOP_RUN_STATUSES)),
    index('loop_runs_started_at_idx').on(t.startedAt.desc(), t.id.desc()),
    index('loop_runs_session_idx').on(t.sessionId),
  ],
);

/**
 * One committed loop iteration: what the runner saw and decided. Written with the run's
 * counters in one transaction, so a crash never leaves half an iteration (SPEC §7, §9).
 */
export const loopIterations = pgTable(
  'loop_iterations',
  {
    runId: text('run_id')
      .notNull()
      .references(() => loopRuns.id, { onDelete: 'cascade' }),
    iteration: integer('iteration').notNull(),
    phase: text('phase').notNull(),
    /** JSON text columns, byte-stable. */
    indicators: text('indicators').notNull(),
    evidence: text('evidence').notNull(),
    stateHash: text('state_hash').notNull(),
    // Null when the iteration ended before the gate (an abort at the approval prompt).
    gateDecision: text('gate_decision'),
    gateReason: text('gate_reason'),
    exitSignal: text('exit_signal'),
    statusBlock: text('status_block').notNull(),
    decision: text('decision'),
    promptTokens: bigint('prompt_tokens', { mode: 'number' }).notNull().default(0),
    completionTokens: bigint('completion_tokens', { mode: 'number' }).notNull().default(0),
    durationMs: bigint('duration_ms', { mode: 'number' }).notNull(),
    startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }).notNull(),
    finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [primaryKey({ name: 'loop_iterations_pkey', columns: [t.runId, t.iteration] })],
);

/** Every table, for `drizzle(client, { schema })`. */
export const schema = {
  sessions,
  messages,
  context,
  todos,
  scratchpad,
  compressionArchives,
  memories,
  planningLogs,
  loopRuns,
  loopIterations,
};
