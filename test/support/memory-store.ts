/** An in-memory Store for unit tests of the agent core (the real one is tested in test/store). */
import type { ChatMessage } from '../../src/llm/types.js';
import type {
  ArchiveRecord,
  LoopRunRepository,
  MemoryRecord,
  MemorySource,
  MessageOptions,
  NewArchive,
  NewSession,
  PlanningLogRecord,
  SessionRecord,
  Store,
  StoredMessage,
} from '../../src/store/types.js';
import type { ScratchpadEntry, TodoItem } from '../../src/tools/types.js';

export class MemoryStore implements Store {
  readonly backend = 'pglite' as const;
  readonly location = 'memory';
  readonly rows = new Map<string, SessionRecord>();
  readonly display = new Map<string, StoredMessage[]>();
  readonly view = new Map<string, ChatMessage[]>();
  readonly todos = new Map<string, TodoItem[]>();
  readonly pads = new Map<string, ScratchpadEntry[]>();
  closed = false;

  readonly sessions = {
    create: (s: NewSession): Promise<void> => {
      const now = new Date();
      this.rows.set(s.id, { ...s, parentId: s.parentId ?? null, promptTokens: 0, completionTokens: 0, createdAt: now, updatedAt: now });
      return Promise.resolve();
    },
    get: (id: string): Promise<SessionRecord | null> => Promise.resolve(this.rows.get(id) ?? null),
    list: (): Promise<SessionRecord[]> => Promise.resolve([...this.rows.values()].reverse()),
    remove: (id: string): Promise<boolean> => Promise.resolve(this.rows.delete(id)),
    addUsage: (id: string, p: number, c: number): Promise<void> => {
      const row = this.rows.get(id);
      if (row) {
        row.promptTokens += p;
        row.completionTokens += c;
      }
      return Promise.resolve();
    },
  };

  readonly messages = {
    append: (sessionId: string, message: ChatMessage, opts?: MessageOptions): Promise<void> => {
      if (!this.rows.has(sessionId)) return Promise.reject(new Error(`no session ${sessionId}`));
      const row = this.rows.get(sessionId);
      if (row && opts?.usage) {
        row.promptTokens += opts.usage.promptTokens;
        row.completionTokens += opts.usage.completionTokens;
      }
      const list = this.display.get(sessionId) ?? [];
      list.push({ ...message, seq: list.length + 1, isPlan: opts?.isPlan ?? false, createdAt: new Date() });
      this.display.set(sessionId, list);
      if (opts?.toContext !== false) {
        const view = this.view.get(sessionId) ?? [];
        view.push(message);
        this.view.set(sessionId, view);
      }
      return Promise.resolve();
    },
    list: (sessionId: string): Promise<StoredMessage[]> => Promise.resolve(this.display.get(sessionId) ?? []),
  };

  readonly context = {
    load: (sessionId: string): Promise<ChatMessage[]> => Promise.resolve([...(this.view.get(sessionId) ?? [])]),
    replace: (sessionId: string, messages: ChatMessage[]): Promise<void> => {
      this.view.set(sessionId, [...messages]);
      return Promise.resolve();
    },
  };

  readonly state = {
    getTodos: (id: string): Promise<TodoItem[]> => Promise.resolve(this.todos.get(id) ?? []),
    setTodos: (id: string, items: TodoItem[]): Promise<void> => {
      this.todos.set(id, items);
      return Promise.resolve();
    },
    getScratchpad: (id: string): Promise<ScratchpadEntry[]> => Promise.resolve(this.pads.get(id) ?? []),
    setScratchpad: (id: string, entries: ScratchpadEntry[]): Promise<void> => {
      this.pads.set(id, entries);
      return Promise.resolve();
    },
  };

  readonly archiveRows: ArchiveRecord[] = [];
  readonly archives = {
    add: (sessionId: string, a: NewArchive): Promise<ArchiveRecord> => {
      const rec = { ...a, id: this.archiveRows.length + 1, sessionId, createdAt: new Date() };
      this.archiveRows.push(rec);
      return Promise.resolve(rec);
    },
    list: (sessionId: string): Promise<ArchiveRecord[]> => Promise.resolve(this.archiveRows.filter((a) => a.sessionId === sessionId)),
    compactContext: async (sessionId: string, next: ChatMessage[], a: NewArchive): Promise<ArchiveRecord> => {
      this.view.set(sessionId, [...next]);
      return this.archives.add(sessionId, a);
    },
  };

  readonly memoryRows: MemoryRecord[] = [];
  readonly memories = {
    add: (userId: string, fact: string, source: MemorySource, sessionId?: string | null): Promise<MemoryRecord> => {
      const existing = this.memoryRows.find((m) => m.userId === userId && m.fact === fact);
      if (existing) return Promise.resolve(existing);
      const rec = { id: `m_${String(this.memoryRows.length + 1).padStart(8, '0')}`, userId, fact, source, sessionId: sessionId ?? null, createdAt: new Date() };
      this.memoryRows.push(rec);
      return Promise.resolve(rec);
    },
    list: (userId: string): Promise<MemoryRecord[]> => Promise.resolve(this.memoryRows.filter((m) => m.userId === userId)),
    remove: (userId: string, id: string): Promise<boolean> => {
      const i = this.memoryRows.findIndex((m) => m.userId === userId && m.id === id);
      if (i >= 0) this.memoryRows.splice(i, 1);
      return Promise.resolve(i >= 0);
    },
  };

  readonly logRows: PlanningLogRecord[] = [];
  readonly planningLogs = {
    append: (sessionId: string, data: unknown): Promise<PlanningLogRecord> => {
      const rec = { id: this.logRows.length + 1, sessionId, data, createdAt: new Date() };
      this.logRows.push(rec);
      return Promise.resolve(rec);
    },
    list: (sessionId: string): Promise<PlanningLogRecord[]> => Promise.resolve(this.logRows.filter((r) => r.sessionId === sessionId).slice(-20)),
  };

  /** Loop runs are exercised against the real store (test/store); the agent core never uses them. */
  readonly loopRuns = new Proxy({} as LoopRunRepository, {
    get: () => () => Promise.reject(new Error('MemoryStore has no loop runs')),
  });

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}
