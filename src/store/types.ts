/**
 * The repositories the rest of navi uses. One implementation (drizzle) serves both PGlite and
 * PostgreSQL; nothing outside `store/` sees SQL or the driver.
 */
import type { ChatMessage } from '../llm/types.js';
import type { SessionStateStore } from '../tools/types.js';
import type { LoopRunRepository } from './loop-run-types.js';

export type * from './loop-run-types.js';

export type SessionKind = 'chat' | 'subagent' | 'loop';

export interface SessionRecord {
  id: string;
  kind: SessionKind;
  profile: string;
  cwd: string;
  parentId: string | null;
  /** First line of the first prompt, for listings. */
  title: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewSession {
  id: string;
  kind: SessionKind;
  profile: string;
  cwd: string;
  parentId?: string | null;
  title: string;
  model: string;
}

/** A display-buffer row (`messages`): everything that happened, never compressed. */
export interface StoredMessage extends ChatMessage {
  seq: number;
  isPlan: boolean;
  createdAt: Date;
}

export interface MessageOptions {
  /** Also append to the model's view (`context`). Default true. */
  toContext?: boolean;
  /** Mark an injected plan (rendered specially by `sessions show`). */
  isPlan?: boolean;
  /** Real token counts of the model call that produced this message, added to the session's totals. */
  usage?: { promptTokens: number; completionTokens: number };
}

export interface SessionRepository {
  create(session: NewSession): Promise<void>;
  get(id: string): Promise<SessionRecord | null>;
  /** Most recently active first (`updated_at`: appends and `addUsage` bump it); `cwd`: started there. */
  list(opts?: { limit?: number; kind?: SessionKind; cwd?: string }): Promise<SessionRecord[]>;
  /** Deletes the session and everything that belongs to it (messages, context, todos…). */
  remove(id: string): Promise<boolean>;
  /** Adds real token counts from one model call and bumps `updated_at`. */
  addUsage(id: string, promptTokens: number, completionTokens: number): Promise<void>;
}

export interface MessageRepository {
  /**
   * Writes one message as it happens (display buffer, and the context unless told otherwise).
   * Both rows are committed together before the promise resolves.
   */
  append(sessionId: string, message: ChatMessage, opts?: MessageOptions): Promise<void>;
  /** The display buffer in order. */
  list(sessionId: string): Promise<StoredMessage[]>;
}

export interface ContextRepository {
  /** The model's view in order. */
  load(sessionId: string): Promise<ChatMessage[]>;
  /** Replaces the whole view atomically (compression). */
  replace(sessionId: string, messages: ChatMessage[]): Promise<void>;
}

/** Which compression wrote an archive (SPEC §8): before, during or after a turn, or forced. */
export type ArchiveReason = 'preturn' | 'midturn' | 'postturn' | 'manual';

/** What one compression replaced. */
export interface NewArchive {
  reason: ArchiveReason;
  /** The summary that took the replaced messages' place. */
  summary: string;
  /** The context messages it replaced, stored byte-for-byte as JSON text. */
  messages: ChatMessage[];
  /** Estimated context tokens before and after (whole numbers). */
  tokensBefore: number;
  tokensAfter: number;
}

/** A stored compression archive (`compression_archives`). */
export interface ArchiveRecord extends NewArchive {
  /** Increasing with insertion order. */
  id: number;
  sessionId: string;
  createdAt: Date;
}

export interface ArchiveRepository {
  /** Stores an archive on its own (the context is left alone). */
  add(sessionId: string, archive: NewArchive): Promise<ArchiveRecord>;
  /** A session's archives, oldest first. */
  list(sessionId: string): Promise<ArchiveRecord[]>;
  /**
   * Replaces the session's context with `newContext` and stores `archive`, in one transaction:
   * after a crash or a failed write either both happened or neither did.
   */
  compactContext(sessionId: string, newContext: ChatMessage[], archive: NewArchive): Promise<ArchiveRecord>;
}

/** Who wrote a memory: the `remember` tool or the post-turn extraction worker. */
export type MemorySource = 'tool' | 'extraction';

/** A remembered fact (`memories`). */
export interface MemoryRecord {
  /** Short stable id the user passes to `forget`: `m_` + 8 base36 characters. */
  id: string;
  userId: string;
  fact: string;
  source: MemorySource;
  /** The session that wrote it; null once that session is deleted (memories outlive it). */
  sessionId: string | null;
  createdAt: Date;
}

export interface MemoryRepository {
  /**
   * Remembers `fact` for `userId`. Idempotent: the same fact again returns the record stored
   * the first time (its id, source and session unchanged).
   */
  add(userId: string, fact: string, source: MemorySource, sessionId?: string | null): Promise<MemoryRecord>;
  /** The user's memories, oldest first (a stable order keeps the memory message byte-stable). */
  list(userId: string): Promise<MemoryRecord[]>;
  /** Forgets one of the user's memories; false when the user has no memory with that id. */
  remove(userId: string, id: string): Promise<boolean>;
}

/** One planning debug entry (`planning_logs`). */
export interface PlanningLogRecord {
  /** Increasing with insertion order. */
  id: number;
  sessionId: string;
  /** Whatever was appended, parsed back from JSON text (keys in their original order). */
  data: unknown;
  createdAt: Date;
}

export interface PlanningLogRepository {
  /**
   * Appends one entry (any JSON-serialisable value) and, in the same transaction, deletes the
   * session's oldest entries beyond `PLANNING_LOG_CAP` (20).
   */
  append(sessionId: string, data: unknown): Promise<PlanningLogRecord>;
  /** The session's entries, oldest first (at most 20). */
  list(sessionId: string): Promise<PlanningLogRecord[]>;
}

export interface Store {
  readonly backend: 'pglite' | 'postgres';
  /** Where the data lives: the PGlite directory or the redacted server URL. */
  readonly location: string;
  readonly sessions: SessionRepository;
  readonly messages: MessageRepository;
  readonly context: ContextRepository;
  readonly state: SessionStateStore;
  /** What compression replaced, and the atomic compaction itself. */
  readonly archives: ArchiveRepository;
  /** Long-term memory per user (`remember` / `forget`, `navi memory`). */
  readonly memories: MemoryRepository;
  /** Planning debug data per session, capped at 20. */
  readonly planningLogs: PlanningLogRepository;
  /** Loop runs and their committed iterations (SPEC §7). */
  readonly loopRuns: LoopRunRepository;
  /** Closes connections and releases the PGlite lock. Safe to call twice. */
  close(): Promise<void>;
}

export interface OpenStoreOptions {
  /** postgres:// URL; absent → embedded PGlite in `dataDir`. */
  url?: string;
  /** PGlite directory (default `~/.local/share/navi/pgdata` or `$NAVI_DATA_DIR`). */
  dataDir: string;
  /** PostgreSQL only: seconds to wait for the server to answer before failing (default 10). */
  connectTimeoutS?: number;
  /** PGlite only: told once when a new database is being created (a one-time cost). */
  notice?: (message: string) => void;
  /** PGlite only: false runs initdb instead of unpacking the shipped template (the build makes the template so). */
  useTemplate?: boolean;
  /**
   * PGlite only: `worker` (default) runs PGlite in a worker thread with prepared statements (the
   * fast path); `main-thread` is the plain driver (PGlite's own client in this thread, drizzle's
   * pglite adapter as documented), kept beside it as the oracle the tests compare it with.
   */
  pgliteDriver?: 'worker' | 'main-thread';
}

/** What `migrateDatabase` (`navi db migrate`) did. */
export interface MigrationReport {
  backend: Store['backend'];
  /** As in `Store.location` (password redacted). */
  location: string;
  /** Migrations applied now (0: the database was already up to date). */
  applied: number;
  /** Migrations shipped with this navi. */
  total: number;
}
