/**
 * The two buffers of a session (SPEC §8): `messages`, the display history that is never
 * compressed, and `context`, the model's view that compression replaces as a whole.
 *
 * Appends run once per message in the tool loop, so each is one prepared statement: it bumps
 * the session's seq counters and writes the display row and the context row through
 * data-modifying CTEs (atomic without a transaction's extra round trips). The counter UPDATE
 * takes the session row lock, so writers in several processes get distinct, gapless seqs; the
 * cost is a primary-key update and two index inserts, flat as history grows.
 */
import { asc, eq, sql } from 'drizzle-orm';
import type { ChatMessage, ToolCallRequest } from '../llm/types.js';
import type { NaviDatabase } from './database.js';
import { driverError, guardQuery, missingSession, queryError, sessionForeignKey } from './driver-errors.js';
import { nullableText, pgText } from './encoding.js';
import { context, messages, sessions } from './schema.js';
import type { ContextRepository, MessageOptions, MessageRepository, StoredMessage } from './types.js';

/** Rows per INSERT in `context.replace`: 6 parameters a row stays far below PostgreSQL's 65535. */
const REPLACE_CHUNK_ROWS = 1_000;

/** Display-buffer repository over either driver. */
export function createMessageRepository(db: NaviDatabase): MessageRepository {
  const statements = prepareAppend(db);
  return {
    async append(sessionId: string, message: ChatMessage, opts: MessageOptions = {}): Promise<void> {
      const values: AppendValues = {
        sessionId,
        role: message.role,
        content: pgText(message.content),
        thinking: message.thinking === undefined ? null : pgText(message.thinking),
        toolCalls: encodeToolCalls(message.tool_calls),
        toolName: nullableText(message.tool_name),
        toolCallId: nullableText(message.tool_call_id),
        isPlan: opts.isPlan === true,
        promptTokens: opts.usage?.promptTokens ?? 0,
        completionTokens: opts.usage?.completionTokens ?? 0,
      };
      const statement = opts.toContext === false ? statements.displayOnly : statements.displayAndContext;
      try {
        await statement.execute(values);
      } catch (err) {
        // No session row: the counter CTE returns nothing, so seq is NULL (23502).
        const { code, column } = driverError(err);
        if ((code === '23502' && column === 'seq') || code === '23503') throw missingSession(sessionId);
        throw queryError('messages.append', err);
      }
    },

    async list(sessionId: string): Promise<StoredMessage[]> {
      const rows = await guardQuery('messages.list', () =>
        db.select().from(messages).where(eq(messages.sessionId, sessionId)).orderBy(asc(messages.seq)),
      );
      return rows.map((row) => ({
        ...chatMessage(row),
        seq: row.seq,
        isPlan: row.isPlan,
        createdAt: row.createdAt,
      }));
    },
  };
}

/** Model-view repository over either driver. */
export function createContextRepository(db: NaviDatabase): ContextRepository {
  return {
    async load(sessionId: string): Promise<ChatMessage[]> {
      const rows = await guardQuery('context.load', () =>
        db.select().from(context).where(eq(context.sessionId, sessionId)).orderBy(asc(context.seq)),
      );
      return rows.map(chatMessage);
    },

    async replace(sessionId: string, view: ChatMessage[]): Promise<void> {
      await guardQuery(
        'context.replace',
        () => db.transaction((tx) => writeContext(tx, sessionId, view)),
        sessionForeignKey(sessionId),
      );
    },
  };
}

/**
 * Replaces the context of `sessionId` with `view` inside the caller's transaction `tx` (used by
 * `context.replace` and by `archives.compactContext`, which writes the archive in the same one).
 * Throws `session_not_found` when the session does not exist.
 */
export async function writeContext(tx: NaviDatabase, sessionId: string, view: ChatMessage[]): Promise<void> {
  const rows = view.map((message, index) => ({
    sessionId,
    seq: index + 1,
    role: message.role,
    content: pgText(message.content),
    thinking: nullableText(message.thinking),
    toolCalls: encodeToolCalls(message.tool_calls),
    toolName: nullableText(message.tool_name),
    toolCallId: nullableText(message.tool_call_id),
  }));
  // Counter first: its row lock holds concurrent appends until the new view commits.
  const updated = await tx
    .update(sessions)
    .set({ contextSeq: rows.length })
    .where(eq(sessions.id, sessionId))
    .returning({ id: sessions.id });
  if (updated.length === 0) throw missingSession(sessionId);
  await tx.delete(context).where(eq(context.sessionId, sessionId));
  for (let start = 0; start < rows.length; start += REPLACE_CHUNK_ROWS) {
    await tx.insert(context).values(rows.slice(start, start + REPLACE_CHUNK_ROWS));
  }
}

/** Parameters of the prepared append statements. */
type AppendValues = {
  sessionId: string;
  role: ChatMessage['role'];
  content: string;
  thinking: string | null;
  toolCalls: string | null;
  toolName: string | null;
  toolCallId: string | null;
  isPlan: boolean;
  promptTokens: number;
  completionTokens: number;
};

/**
 * The append statements, built once and prepared: postgres.js then reuses a named server-side
 * statement instead of parsing and planning on every call (about half the cost of an append).
 */
function prepareAppend(db: NaviDatabase) {
  const p = <K extends keyof AppendValues>(name: K) => sql.placeholder(name);
  const bump = (withContext: boolean) =>
    db.$with('counter').as(
      db
        .update(sessions)
        .set({
          messageSeq: sql`${sessions.messageSeq} + 1`,
          // Token usage of the model call that produced this message rides on the same write.
          promptTokens: sql`${sessions.promptTokens} + ${p('promptTokens')}`,
          completionTokens: sql`${sessions.completionTokens} + ${p('completionTokens')}`,
          ...(withContext && { contextSeq: sql`${sessions.contextSeq} + 1` }),
          // The row is written anyway: keep "most recently active" listings exact for free.
          updatedAt: sql`now()`,
        })
        .where(eq(sessions.id, p('sessionId')))
        .returning({ messageSeq: sessions.messageSeq, contextSeq: sessions.contextSeq }),
    );
  const messageRow = (counter: ReturnType<typeof bump>) => ({
    sessionId: p('sessionId'),
    seq: sql`(select ${counter.messageSeq} from ${counter})`,
    role: p('role'),
    content: p('content'),
    thinking: p('thinking'),
    toolCalls: p('toolCalls'),
    toolName: p('toolName'),
    toolCallId: p('toolCallId'),
    isPlan: p('isPlan'),
  });

  const displayCounter = bump(false);
  const displayOnly = db.with(displayCounter).insert(messages).values(messageRow(displayCounter));

  const bothCounter = bump(true);
  // Statements in a WITH run exactly once, and the whole statement commits or fails as one.
  const displayRow = db.$with('display_row').as(db.insert(messages).values(messageRow(bothCounter)));
  const displayAndContext = db
    .with(bothCounter, displayRow)
    .insert(context)
    .values({
      sessionId: p('sessionId'),
      seq: sql`(select ${bothCounter.contextSeq} from ${bothCounter})`,
      role: p('role'),
      content: p('content'),
      thinking: p('thinking'),
      toolCalls: p('toolCalls'),
      toolName: p('toolName'),
      toolCallId: p('toolCallId'),
    });

  return {
    displayOnly: displayOnly.prepare('navi_append_message'),
    displayAndContext: displayAndContext.prepare('navi_append_message_and_context'),
  };
}

function chatMessage(row: {
  role: ChatMessage['role'];
  content: string;
  thinking?: string | null;
  toolCalls: string | null;
  toolName: string | null;
  toolCallId: string | null;
}): ChatMessage {
  return {
    role: row.role,
    content: row.content,
    ...(row.thinking != null && { thinking: row.thinking }),
    ...(row.toolCalls !== null && { tool_calls: JSON.parse(row.toolCalls) as ToolCallRequest[] }),
    ...(row.toolName !== null && { tool_name: row.toolName }),
    ...(row.toolCallId !== null && { tool_call_id: row.toolCallId }),
  };
}

/**
 * Tool calls as JSON text: parsing it back yields objects whose keys are in the original order,
 * so the request re-sent to the model is byte-identical (jsonb would sort the keys).
 */
function encodeToolCalls(calls: readonly ToolCallRequest[] | undefined): string | null {
  return calls === undefined ? null : JSON.stringify(calls);
}
