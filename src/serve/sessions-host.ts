/**
 * The chat sessions of `navi serve`: one turn at a time per session, run by the agent core
 * (`ServeDeps.runTurn`), its events streamed to the session's subscribers. A session made by
 * POST /sessions lives in memory until its first turn (the agent stores a new session once the
 * model answered, as `navi run` does); every other session is read from the store, so sessions
 * of `navi run` are listed and can be continued too.
 */
import { randomUUID } from 'node:crypto';
import type { SessionRecord, StoredMessage } from '../store/types.js';
import { ApiError, notFound } from './api-error.js';
import { EventStream } from './event-stream.js';
import { failureEvents, turnResult } from './turn-result.js';
import type { ServeDeps } from './types.js';

interface Draft {
  id: string;
  profile: string;
  model: string;
  createdAt: Date;
}

interface Live {
  stream: EventStream;
  turn: { abort: AbortController; done: Promise<void> } | null;
}

export type SessionView = ReturnType<typeof sessionSummaryOf>;

function iso(d: Date): string {
  return d.toISOString();
}

function sessionSummaryOf(r: { id: string; profile: string; model: string; title: string; createdAt: Date; updatedAt: Date; promptTokens: number; completionTokens: number }, running: boolean, stored: boolean) {
  return {
    id: r.id,
    profile: r.profile,
    model: r.model,
    title: r.title,
    status: running ? ('running' as const) : ('idle' as const),
    stored,
    created_at: iso(r.createdAt),
    updated_at: iso(r.updatedAt),
    usage: { prompt_tokens: r.promptTokens, completion_tokens: r.completionTokens },
  };
}

/** A display-buffer row as the API shows it (snake_case, ISO times). */
export function messageView(m: StoredMessage): Record<string, unknown> {
  return {
    seq: m.seq,
    role: m.role,
    content: m.content,
    ...(m.thinking !== undefined && m.thinking !== '' ? { thinking: m.thinking } : {}),
    ...(m.tool_calls !== undefined && m.tool_calls.length > 0 ? { tool_calls: m.tool_calls } : {}),
    ...(m.tool_name !== undefined ? { tool_name: m.tool_name } : {}),
    is_plan: m.isPlan,
    created_at: iso(m.createdAt),
  };
}

export class SessionsHost {
  private readonly drafts = new Map<string, Draft>();
  private readonly live = new Map<string, Live>();
  private closing = false;

  constructor(private readonly deps: ServeDeps) {}

  create(body: { profile?: string | undefined; model?: string | undefined }): ReturnType<typeof sessionSummaryOf> {
    const profile = body.profile ?? this.deps.defaults.profile;
    this.deps.checkProfile(profile);
    const draft: Draft = { id: randomUUID(), profile, model: body.model ?? this.deps.defaults.model, createdAt: new Date() };
    this.drafts.set(draft.id, draft);
    return this.draftSummary(draft);
  }

  async list(): Promise<Array<ReturnType<typeof sessionSummaryOf>>> {
    const stored = await this.deps.store.sessions.list({ kind: 'chat', limit: 200 });
    const drafts = [...this.drafts.values()].filter((d) => !stored.some((s) => s.id === d.id)).map((d) => this.draftSummary(d));
    return [...drafts.reverse(), ...stored.map((s) => sessionSummaryOf(s, this.running(s.id), true))];
  }

  async get(id: string): Promise<Record<string, unknown>> {
    const found = await this.find(id);
    const messages = found.stored ? (await this.deps.store.messages.list(id)).map(messageView) : [];
    return { ...found.summary, messages, next_seq: this.stream(id).nextSeq };
  }

  async remove(id: string): Promise<void> {
    await this.find(id);
    if (this.running(id)) throw new ApiError(409, 'busy', `session '${id}' is running a turn; stop it first (POST /sessions/${id}/stop)`);
    this.drafts.delete(id);
    this.live.get(id)?.stream.closeAll(1000, 'session deleted');
    this.live.delete(id);
    await this.deps.store.sessions.remove(id);
  }

  /** Starts a turn; returns the seq of its first event. 409 while one runs. */
  async startTurn(id: string, content: string): Promise<number> {
    if (this.closing) throw new ApiError(503, 'shutting_down', 'the server is stopping');
    const found = await this.find(id);
    const live = this.liveOf(id);
    if (live.turn !== null) throw new ApiError(409, 'busy', `session '${id}' is running a turn; wait for its result or stop it (POST /sessions/${id}/stop)`);
    const draft = this.drafts.get(id);
    const abort = new AbortController();
    const started = Date.now();
    live.stream.beginTurn();
    const firstSeq = live.stream.nextSeq;
    const events = this.deps.runTurn({
      sessionId: id,
      newSession: !found.stored,
      message: content,
      profileId: found.summary.profile,
      model: found.summary.model,
      signal: abort.signal,
    });
    const done = (async () => {
      try {
        for (;;) {
          const step = await events.next();
          if (step.done) {
            live.stream.publish(turnResult(step.value, started));
            break;
          }
          live.stream.publish(step.value);
        }
      } catch (err) {
        for (const ev of failureEvents(err, started, abort.signal.aborted)) live.stream.publish(ev);
      } finally {
        live.turn = null;
        if (draft !== undefined && (await this.deps.store.sessions.get(id).catch(() => null)) !== null) this.drafts.delete(id);
      }
    })();
    live.turn = { abort, done };
    return firstSeq;
  }

  /** Stops the running turn at its next safe point (what was said is saved); false: none ran. */
  stop(id: string): boolean {
    const turn = this.live.get(id)?.turn;
    if (turn === undefined || turn === null) return false;
    turn.abort.abort();
    return true;
  }

  /** The session's event stream (404 for an unknown session). */
  async streamOf(id: string): Promise<EventStream> {
    await this.find(id);
    return this.liveOf(id).stream;
  }

  /** Stops every running turn and waits until each is saved (SIGINT/SIGTERM). */
  async stopAll(): Promise<void> {
    this.closing = true;
    const turns = [...this.live.values()].map((l) => l.turn).filter((t): t is NonNullable<Live['turn']> => t !== null);
    for (const t of turns) t.abort.abort();
    await Promise.all(turns.map((t) => t.done));
    for (const l of this.live.values()) l.stream.closeAll(1001, 'server stopping');
  }

  private running(id: string): boolean {
    return (this.live.get(id)?.turn ?? null) !== null;
  }

  private stream(id: string): EventStream {
    return this.liveOf(id).stream;
  }

  private liveOf(id: string): Live {
    let l = this.live.get(id);
    if (l === undefined) {
      l = { stream: new EventStream(id), turn: null };
      this.live.set(id, l);
    }
    return l;
  }

  private draftSummary(d: Draft): ReturnType<typeof sessionSummaryOf> {
    return sessionSummaryOf({ ...d, title: '', updatedAt: d.createdAt, promptTokens: 0, completionTokens: 0 }, this.running(d.id), false);
  }

  private async find(id: string): Promise<{ summary: ReturnType<typeof sessionSummaryOf>; stored: boolean; record: SessionRecord | null }> {
    const record = await this.deps.store.sessions.get(id);
    if (record !== null && record.kind !== 'subagent') return { summary: sessionSummaryOf(record, this.running(id), true), stored: true, record };
    const draft = this.drafts.get(id);
    if (draft !== undefined) return { summary: this.draftSummary(draft), stored: false, record: null };
    throw notFound('session', id);
  }
}
