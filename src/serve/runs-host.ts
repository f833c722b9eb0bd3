/**
 * Loop runs for `navi serve`: the runs this server starts (POST /runs), driven by the loop runner
 * with a decision source the API answers, their events streamed to subscribers; and the runs of
 * other navi processes on the same store (`navi loop` in tmux, cron, CI), listed from the store
 * with their owner's heartbeat and followed by polling their committed rows — the CLI loop does
 * not need the server to be up, and the server never writes to a run it does not own.
 */
import { hostname } from 'node:os';
import { ownerOf, pidAlive } from '../loop/ownership.js';
import type { LoopRunRecord } from '../store/types.js';
import { ApiError, notFound } from './api-error.js';
import { EventStream } from './event-stream.js';
import { iterationView, runSummaryView } from './run-views.js';
import { ServerDecisions, type PendingQuestion } from './server-decisions.js';
import { failureEvents, loopResult } from './turn-result.js';
import type { DecisionWord } from '../loop/decisions.js';
import type { LoopRequest, ServeDeps } from './types.js';

interface OwnRun {
  stream: EventStream;
  decisions: ServerDecisions;
  abort: AbortController;
  done: Promise<void>;
}

/** A run of another process that has subscribers: its rows are polled. */
interface Followed {
  stream: EventStream;
  timer: NodeJS.Timeout | null;
  lastIteration: number;
  lastStatus: string;
  lastUpdated: number;
}

/** How often a followed run's rows are read (NAVI_SERVE_POLL_MS shortens it in tests). */
export const DEFAULT_POLL_MS = 1_000;

export class RunsHost {
  private readonly own = new Map<string, OwnRun>();
  private readonly followed = new Map<string, Followed>();
  private readonly starting = new Set<Promise<unknown>>();
  private closing = false;

  constructor(
    private readonly deps: ServeDeps,
    private readonly pollMs = DEFAULT_POLL_MS,
  ) {}

  async list(limit = 50): Promise<Array<Record<string, unknown>>> {
    const now = Date.now();
    const runs = await this.deps.store.loopRuns.list({ limit });
    return runs.map((r) => runSummaryView(r, { ownPending: (id) => this.pendingOf(id), now }));
  }

  async get(id: string): Promise<Record<string, unknown>> {
    const run = await this.record(id);
    const iterations = await this.deps.store.loopRuns.listIterations(id);
    return {
      ...runSummaryView(run, { ownPending: (rid) => this.pendingOf(rid), now: Date.now() }),
      iterations: iterations.map(iterationView),
      config: run.config,
      cwd: run.cwd,
      next_seq: this.own.get(id)?.stream.nextSeq ?? this.followed.get(id)?.stream.nextSeq ?? null,
    };
  }

  /** Starts a loop run; resolves once the runner stored it (its id is known). */
  async start(body: LoopRequest): Promise<{ id: string; session_id: string; status: string }> {
    if (this.closing) throw new ApiError(503, 'shutting_down', 'the server is stopping');
    const stream = new EventStream('');
    const decisions = new ServerDecisions();
    const abort = new AbortController();
    const started = Date.now();
    let opened: (ids: { runId: string; sessionId: string }) => void = () => undefined;
    const openedIds = new Promise<{ runId: string; sessionId: string }>((resolve) => (opened = resolve));
    const setup = this.deps.startLoop(body, {
      decisions,
      signal: abort.signal,
      onOpen: (ids) => {
        stream.setIds(ids.sessionId, ids.runId);
        this.own.set(ids.runId, { stream, decisions, abort, done });
        opened(ids);
      },
    });
    this.starting.add(setup);
    let failedBeforeOpen: (err: unknown) => void = () => undefined;
    const failure = new Promise<never>((_resolve, reject) => (failedBeforeOpen = reject));
    failure.catch(() => undefined);
    let isOpen = false;
    void openedIds.then(() => (isOpen = true));
    const done: Promise<void> = (async () => {
      let loop;
      try {
        loop = await setup;
      } catch (err) {
        failedBeforeOpen(err);
        return;
      } finally {
        this.starting.delete(setup);
      }
      try {
        for (;;) {
          const step = await loop.events.next();
          if (step.done) {
            stream.publish(loopResult(step.value, started));
            break;
          }
          stream.publish(step.value);
        }
      } catch (err) {
        if (!isOpen) failedBeforeOpen(err);
        else for (const ev of failureEvents(err, started, abort.signal.aborted)) stream.publish(ev);
      } finally {
        await loop.close().catch(() => undefined);
      }
    })();
    const ids = await Promise.race([openedIds, failure]);
    return { id: ids.runId, session_id: ids.sessionId, status: 'running' };
  }

  /** Answers the run's open question (the `--decisions` line shape). */
  async decide(id: string, decision: DecisionWord, feedback?: string): Promise<void> {
    const own = this.own.get(id);
    if (own === undefined) {
      const run = await this.record(id);
      throw new ApiError(409, 'not_owned', `run '${id}' is ${run.status === 'running' ? 'driven by another navi process; answer it there' : `not running (${run.status})`}`);
    }
    const answered = own.decisions.answer(decision, feedback);
    if (!answered.ok) throw new ApiError(answered.code === 'no_pending_decision' ? 409 : 400, answered.code, answered.message);
  }

  /**
   * Stops a run at its next safe point (it is saved, resumable). A run of another navi on this
   * host gets SIGINT, as Ctrl-C in its terminal would; elsewhere it cannot be reached (409).
   */
  async stop(id: string): Promise<boolean> {
    const own = this.own.get(id);
    if (own !== undefined) {
      if (own.abort.signal.aborted) return false;
      own.abort.abort();
      return true;
    }
    const run = await this.record(id);
    if (run.status !== 'running') return false;
    const owner = ownerOf(run.config);
    if (owner === null || owner.host !== hostname() || !pidAlive(owner.pid)) {
      throw new ApiError(409, 'not_owned', `run '${id}' is driven by ${owner === null ? 'an unknown process' : `pid ${owner.pid} on ${owner.host}`}; stop it there`);
    }
    process.kill(owner.pid, 'SIGINT');
    return true;
  }

  /** The run's stream: live events of an own run; rows polled and announced for another's. */
  async streamOf(id: string): Promise<{ stream: EventStream; release: () => void }> {
    const own = this.own.get(id);
    if (own !== undefined) return { stream: own.stream, release: () => undefined };
    const run = await this.record(id);
    let f = this.followed.get(id);
    if (f === undefined) {
      f = { stream: new EventStream(run.sessionId, id), timer: null, lastIteration: run.iteration, lastStatus: run.status, lastUpdated: run.updatedAt.getTime() };
      this.followed.set(id, f);
      this.schedule(id, f);
    }
    const followed = f;
    return {
      stream: followed.stream,
      release: () => {
        if (followed.stream.subscriberCount > 0) return;
        if (followed.timer !== null) clearTimeout(followed.timer);
        this.followed.delete(id);
      },
    };
  }

  /** Stops every run this server drives and waits until each is saved (SIGINT/SIGTERM). */
  async stopAll(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.starting].map((s) => s.catch(() => undefined)));
    const runs = [...this.own.values()];
    for (const r of runs) r.abort.abort();
    await Promise.all(runs.map((r) => r.done));
    for (const r of runs) r.stream.closeAll(1001, 'server stopping');
    for (const [id, f] of this.followed) {
      if (f.timer !== null) clearTimeout(f.timer);
      f.stream.closeAll(1001, 'server stopping');
      this.followed.delete(id);
    }
  }

  private pendingOf(id: string): PendingQuestion | null | undefined {
    const own = this.own.get(id);
    return own === undefined ? undefined : own.decisions.pending;
  }

  private async record(id: string): Promise<LoopRunRecord> {
    const run = await this.deps.store.loopRuns.get(id);
    if (run === null) throw notFound('loop run', id);
    return run;
  }

  private schedule(id: string, f: Followed): void {
    f.timer = setTimeout(() => void this.poll(id, f), this.pollMs);
    f.timer.unref();
  }

  /** One look at a followed run: new committed iterations and a changed status become frames. */
  private async poll(id: string, f: Followed): Promise<void> {
    if (this.followed.get(id) !== f) return;
    try {
      const run = await this.deps.store.loopRuns.get(id);
      if (run === null) {
        f.stream.notice({ type: 'serve_run_removed', run_id: id });
        return;
      }
      if (run.iteration > f.lastIteration) {
        const rows = await this.deps.store.loopRuns.listIterations(id);
        for (const row of rows.filter((r) => r.iteration > f.lastIteration)) f.stream.notice({ type: 'serve_iteration_committed', run_id: id, iteration: iterationView(row) });
        f.lastIteration = run.iteration;
      }
      if (run.status !== f.lastStatus || run.updatedAt.getTime() !== f.lastUpdated) {
        f.stream.notice({ type: 'serve_run_updated', run: runSummaryView(run, { ownPending: () => undefined, now: Date.now() }) });
        f.lastStatus = run.status;
        f.lastUpdated = run.updatedAt.getTime();
      }
    } catch (err) {
      this.deps.log(`following run ${id}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (this.followed.get(id) === f) this.schedule(id, f);
  }
}
