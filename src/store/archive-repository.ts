/**
 * Compression archives (SPEC §8): what a compression replaced. `compactContext` replaces the
 * context and stores the archive in one transaction, so a crash between the two never loses the
 * replaced messages or leaves an archive for a compression that did not happen.
 */
import { asc, eq } from 'drizzle-orm';
import type { ChatMessage } from '../llm/types.js';
import type { NaviDatabase } from './database.js';
import { guardQuery, sessionForeignKey } from './driver-errors.js';
import { decodeJson, encodeJson, pgText, wholeNumber } from './encoding.js';
import { writeContext } from './message-repository.js';
import { compressionArchives } from './schema.js';
import type { ArchiveRecord, ArchiveRepository, NewArchive } from './types.js';

/** Archive repository over either driver. */
export function createArchiveRepository(db: NaviDatabase): ArchiveRepository {
  return {
    async add(sessionId: string, archive: NewArchive): Promise<ArchiveRecord> {
      const values = archiveRow(sessionId, archive);
      return guardQuery('archives.add', () => insertArchive(db, values), sessionForeignKey(sessionId));
    },

    async list(sessionId: string): Promise<ArchiveRecord[]> {
      const rows = await guardQuery('archives.list', () =>
        db
          .select()
          .from(compressionArchives)
          .where(eq(compressionArchives.sessionId, sessionId))
          .orderBy(asc(compressionArchives.id)),
      );
      return rows.map(toRecord);
    },

    async compactContext(sessionId: string, newContext: ChatMessage[], archive: NewArchive): Promise<ArchiveRecord> {
      // Encoded before the transaction: a value that cannot be stored fails with nothing begun.
      const values = archiveRow(sessionId, archive);
      return guardQuery(
        'archives.compactContext',
        () =>
          db.transaction(async (tx) => {
            await writeContext(tx, sessionId, newContext);
            return insertArchive(tx, values);
          }),
        sessionForeignKey(sessionId),
      );
    },
  };
}

type ArchiveRow = typeof compressionArchives.$inferInsert;

function archiveRow(sessionId: string, archive: NewArchive): ArchiveRow {
  return {
    sessionId,
    reason: archive.reason,
    summary: pgText(archive.summary),
    messages: encodeJson(archive.messages, 'the archived messages'),
    tokensBefore: wholeNumber(archive.tokensBefore),
    tokensAfter: wholeNumber(archive.tokensAfter),
  };
}

async function insertArchive(db: NaviDatabase, values: ArchiveRow): Promise<ArchiveRecord> {
  const [row] = await db.insert(compressionArchives).values(values).returning();
  if (!row) throw new Error('insert returned no row');
  return toRecord(row);
}

function toRecord(row: typeof compressionArchives.$inferSelect): ArchiveRecord {
  return {
    id: row.id,
    sessionId: row.sessionId,
    reason: row.reason,
    summary: row.summary,
    messages: decodeJson(row.messages) as ChatMessage[],
    tokensBefore: row.tokensBefore,
    tokensAfter: row.tokensAfter,
    createdAt: row.createdAt,
  };
}
