/**
 * A guest of a PGlite directory (a navi process that reaches the database through the holder's
 * socket, src/store/shared-pglite.ts) outlives its holder (issue 18, item 1). When the holder
 * leaves — it finished, or was killed — the guest's next statement finds no socket: the guest
 * then takes the directory over (lock, PGlite, serving it) or connects to whoever holds it now,
 * and the statement is run there. Nothing the model produced is lost to a holder that left.
 *
 * A statement is run again only where that is safe (`retryAfterLoss`): always when the
 * connection failed before it was sent (no socket, refused); when the connection broke while
 * it ran, only reads, writes that replace a whole value, and creates of a row with our own id
 * (a second attempt that finds it stored means the first one committed); an append is repeated
 * only when the session does not already end with it, written since it was sent. Any other
 * non-idempotent write that may have committed (token counts, an archive) is not repeated: it
 * fails with a message that says so, and the guest still moves on for the statements after it.
 */
import { NaviError, StorageError } from '../errors.js';
import { errorCode } from './driver-errors.js';
import { newRunId } from './ids.js';
import type { ChatMessage } from '../llm/types.js';
import { nullableText, pgText } from './encoding.js';
import type { NewLoopRun, Store, StoredMessage } from './types.js';

/** Where the connection to the holder broke: before the statement left (`connect`), or while it ran (`in_flight`). */
export type LossPhase = 'connect' | 'in_flight';

/** The error says the holder is gone; null for every other failure (SQL errors, ours). */
export function lossPhase(err: unknown): LossPhase | null {
  switch (errorCode(err) ?? '') {
    case 'ENOENT': // the socket file was withdrawn
    case 'ECONNREFUSED': // a socket file nobody listens on (a holder killed with -9)
    case 'CONNECT_TIMEOUT':
    case '57P03': // cannot_connect_now
      return 'connect';
    case 'CONNECTION_CLOSED':
    case 'CONNECTION_DESTROYED':
    case 'ECONNRESET':
    case 'EPIPE':
    case '57P01': // admin_shutdown
    case '57P02': // crash_shutdown
      return 'in_flight';
    default:
      return null;
  }
}

/** How a repository call may be repeated after the connection broke while it ran. */
export type InFlightRetry = 'retry' | 'retry_exists_is_done' | 'verify_append' | 'never';

/**
 * Per `repository.method`: reads and whole-value writes are repeatable; creates with a
 * caller-chosen key are repeatable when "already exists" counts as done; an append is looked
 * for first (`verify_append`: repeated only when the session does not end with it); the rest
 * may have committed and would be applied twice.
 */
const IN_FLIGHT: Record<string, InFlightRetry> = {
  'sessions.create': 'retry_exists_is_done',
  'sessions.get': 'retry',
  'sessions.list': 'retry',
  'sessions.remove': 'retry',
  'sessions.addUsage': 'never',
  'messages.append': 'verify_append',
  'messages.list': 'retry',
  'context.load': 'retry',
  'context.replace': 'retry',
  'state.getTodos': 'retry',
  'state.setTodos': 'retry',
  'state.getScratchpad': 'retry',
  'state.setScratchpad': 'retry',
  'archives.add': 'never',
  'archives.list': 'retry',
  'archives.compactContext': 'never',
  'memories.add': 'retry', // idempotent by contract: the same fact returns the first record
  'memories.list': 'retry',
  'memories.remove': 'retry',
  'planningLogs.append': 'never',
  'planningLogs.list': 'retry',
  'loopRuns.create': 'retry_exists_is_done',
  'loopRuns.get': 'retry',
  'loopRuns.list': 'retry',
  'loopRuns.update': 'retry', // a patch of absolute values
  'loopRuns.commitIteration': 'retry_exists_is_done', // iteration and run patch commit together
  'loopRuns.listIterations': 'retry',
};

/** May `op` (`repository.method`) be run again after a loss in `phase`? Unknown operations are not. */
export function retryAfterLoss(op: string, phase: LossPhase): InFlightRetry {
  if (phase === 'connect') return 'retry';
  return IN_FLIGHT[op] ?? 'never';
}

/** A stored message is `message` (as the repository writes it: text made storable, tool calls as JSON). */
export function sameMessage(stored: StoredMessage, message: ChatMessage): boolean {
  return (
    stored.role === message.role &&
    stored.content === pgText(message.content) &&
    (stored.tool_name ?? null) === nullableText(message.tool_name) &&
    JSON.stringify(stored.tool_calls ?? null) === JSON.stringify(message.tool_calls ?? null)
  );
}

/** The error codes that mean "the first attempt committed" for a `retry_exists_is_done` operation. */
const EXISTS_CODES = new Set(['session_exists', 'run_exists', 'iteration_exists']);

/** How many holder changes one call lives through before giving up (each is a real takeover or reconnect). */
const MAX_SWITCHES = 5;

const REPOSITORIES = ['sessions', 'messages', 'context', 'state', 'archives', 'memories', 'planningLogs', 'loopRuns'] as const;
type RepositoryName = (typeof REPOSITORIES)[number];

/**
 * Wraps a guest store: `reopen` opens the directory again (holding it, or through its current
 * holder) when the holder is gone. Calls made while that happens wait for it.
 */
export function createGuestStore(first: Store, reopen: () => Promise<Store>): Store {
  let current = first;
  let generation = 0;
  let switching: Promise<void> | null = null;
  let closed = false;

  const switchFrom = (seen: number): Promise<void> => {
    if (seen !== generation) return Promise.resolve(); // another call already moved on
    switching ??= (async () => {
      const old = current;
      void old.close().catch(() => undefined);
      current = await reopen();
      generation++;
    })().finally(() => {
      switching = null;
    });
    return switching;
  };

  async function call(repo: RepositoryName, method: string, args: unknown[]): Promise<unknown> {
    const op = `${repo}.${method}`;
    // A repeated create must name the same row: the run's id is chosen here, not per attempt.
    if (op === 'loopRuns.create') args = [{ ...(args[0] as NewLoopRun), id: (args[0] as NewLoopRun).id ?? newRunId() }, ...args.slice(1)];
    let afterInFlightLoss = false;
    for (let switches = 0; ; switches++) {
      if (switching !== null) await switching;
      if (closed) throw new StorageError('store_closed', `The database was closed before ${op}.`);
      const seen = generation;
      const sentAt = Date.now();
      const target = current[repo] as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
      try {
        return await target[method]!(...args);
      } catch (err) {
        if (afterInFlightLoss && err instanceof NaviError && EXISTS_CODES.has(err.code)) return alreadyDone(op, args);
        const phase = lossPhase(err);
        if (phase === null || switches >= MAX_SWITCHES) throw err;
        const retry = retryAfterLoss(op, phase);
        if (retry === 'never') {
          // Later statements go to the new holder; this one may have committed and is not repeated.
          switchFrom(seen).catch(() => undefined);
          throw new StorageError(
            'store_unreachable',
            `The navi process serving the embedded database left while ${op} ran; it may or may not have been stored, so it was not repeated.`,
            { cause: err },
          );
        }
        if (phase === 'in_flight' && retry === 'retry_exists_is_done') afterInFlightLoss = true;
        await switchFrom(seen);
        if (retry === 'verify_append' && (await appendLanded(args, sentAt))) return undefined;
      }
    }
  }

  /**
   * After a loss while `messages.append(sessionId, message)` ran: did it commit? Yes when the
   * session's last message is this one and was written since it was sent (a second's margin
   * for timestamps). Appends of one session are written in order, so only the last can be it.
   */
  async function appendLanded(args: unknown[], sentAt: number): Promise<boolean> {
    if (switching !== null) await switching;
    const [sessionId, message] = args as [string, ChatMessage];
    const last = (await current.messages.list(sessionId)).at(-1);
    return last !== undefined && last.createdAt.getTime() >= sentAt - 1_000 && sameMessage(last, message);
  }

  /** The row a repeated create found: the first attempt committed; answer as it would have. */
  async function alreadyDone(op: string, args: unknown[]): Promise<unknown> {
    if (op === 'loopRuns.create') return current.loopRuns.get((args[0] as { id: string }).id);
    if (op === 'loopRuns.commitIteration') return current.loopRuns.get(args[0] as string);
    return undefined; // sessions.create
  }

  const wrap = (repo: RepositoryName): unknown => {
    const methods: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(first[repo] as object)) {
      if (typeof value !== 'function') continue;
      const sync = name === 'forgetAll';
      methods[name] = sync
        ? (...args: unknown[]) => (current[repo] as unknown as Record<string, (...a: unknown[]) => unknown>)[name]!(...args)
        : (...args: unknown[]) => call(repo, name, args);
    }
    return methods;
  };

  const repositories = Object.fromEntries(REPOSITORIES.map((r) => [r, wrap(r)])) as Pick<Store, RepositoryName>;
  return {
    backend: first.backend,
    get location() {
      return current.location;
    },
    ...repositories,
    async close(): Promise<void> {
      closed = true;
      if (switching !== null) await switching.catch(() => undefined);
      await current.close();
    },
  };
}
