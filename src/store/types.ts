/**
 * The repositories the rest of navi uses. One implementation (drizzle) serves both PGlite and
 * PostgreSQL; nothing outside `store/` sees SQL or the driver.
 */
import type { ChatMessage } from '../llm/types.js';
import type { SessionStateStore } from '../tools/types.js';

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
}

export interface SessionRepository {
  create(session: NewSession): Promise<void>;
  get(id: string): Promise<SessionRecord | null>;
  /** Most recently active first (`updated_at`: appends and `addUsage` bump it). */
  list(opts?: { limit?: number; kind?: SessionKind }): Promise<SessionRecord[]>;
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

export interface Store {
  readonly backend: 'pglite' | 'postgres';
  /** Where the data lives: the PGlite directory or the redacted server URL. */
  readonly location: string;
  readonly sessions: SessionRepository;
  readonly messages: MessageRepository;
  readonly context: ContextRepository;
  readonly state: SessionStateStore;
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
