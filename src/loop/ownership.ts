/**
 * Who is running a loop run right now. A run row says `running` both while a navi works on it
 * and after that navi died (`kill -9`, power loss), so the row records its owner (pid and host,
 * in the run's config) and the owner bumps `updated_at` every HEARTBEAT_MS. `--resume` takes a
 * `running` run over only when its owner is provably gone: the same host and a dead pid, or no
 * heartbeat for STALE_MS (another host, or a pid reused by an unrelated process). Otherwise it
 * refuses, so two navis never drive one run (on PostgreSQL both could reach the database).
 */

/** The process driving a run. */
export interface RunOwner {
  pid: number;
  host: string;
  /** ISO time it took the run. */
  since: string;
}

/** How often the owner proves it is alive: cheap (one UPDATE), frequent enough for STALE_MS. */
export const HEARTBEAT_MS = 10_000;

/** Silence after which an owner counts as gone: six missed heartbeats. */
export const STALE_MS = 60_000;

/** What takeoverVerdict looks at. */
export interface OwnershipInput {
  /** The owner recorded in the run (null: an older row or none recorded). */
  owner: RunOwner | null;
  /** The run's `updated_at` (the heartbeat). */
  updatedAt: Date;
  /** This process. */
  me: { pid: number; host: string };
  now: number;
  /** Whether a pid is alive on this host. */
  isAlive: (pid: number) => boolean;
}

/** May this process take the run over? With a line saying why (shown as a warning or the refusal). */
export type TakeoverVerdict = { ok: true; note: string } | { ok: false; reason: string };

function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 120 ? `${s} s` : `${Math.round(s / 60)} min`;
}

/** The takeover rule (see the module comment). */
export function takeoverVerdict(input: OwnershipInput): TakeoverVerdict {
  const silent = input.now - input.updatedAt.getTime();
  const stale = silent > STALE_MS;
  const o = input.owner;
  if (o === null) {
    return stale
      ? { ok: true, note: `no heartbeat for ${ago(silent)}; taking the run over` }
      : { ok: false, reason: `it was updated ${ago(silent)} ago and may still be running; wait ${ago(STALE_MS - silent)} or stop that navi first` };
  }
  const who = `pid ${o.pid} on ${o.host}`;
  if (o.host === input.me.host) {
    if (o.pid === input.me.pid) return { ok: true, note: 'this process already owns the run' };
    if (!input.isAlive(o.pid)) return { ok: true, note: `its previous process (${who}) is gone; taking the run over` };
    if (stale) return { ok: true, note: `${who} has sent no heartbeat for ${ago(silent)} (its pid was reused); taking the run over` };
    return { ok: false, reason: `it is being run by ${who} (heartbeat ${ago(silent)} ago); stop that navi first (Ctrl-C or kill ${o.pid})` };
  }
  if (stale) return { ok: true, note: `${who} has sent no heartbeat for ${ago(silent)}; taking the run over` };
  return { ok: false, reason: `it is being run by ${who} (heartbeat ${ago(silent)} ago); stop it there, or wait ${ago(STALE_MS - silent)} if that machine is gone` };
}

/** True when `pid` is a live process on this host (EPERM: alive but not ours). */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Reads the owner from a run's stored config (`{…, owner: {pid, host, since}}`); null when absent or malformed. */
export function ownerOf(config: unknown): RunOwner | null {
  if (typeof config !== 'object' || config === null) return null;
  const o = (config as { owner?: unknown }).owner;
  if (typeof o !== 'object' || o === null) return null;
  const { pid, host, since } = o as Record<string, unknown>;
  return typeof pid === 'number' && typeof host === 'string' ? { pid, host, since: typeof since === 'string' ? since : '' } : null;
}

/** Periodic heartbeat: calls `beat` every HEARTBEAT_MS (errors ignored) until stopped; never keeps the process alive. */
export function startHeartbeat(beat: () => Promise<unknown>, intervalMs = HEARTBEAT_MS): { stop(): void } {
  const timer = setInterval(() => {
    beat().catch(() => undefined);
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** What `runs list`/`show` say about a run's owner (issue 18, item 6). */
export interface OwnerReport {
  owner: RunOwner | null;
  /** For a `running` run: does its owner still run it? Null for a run that is not running. */
  alive: boolean | null;
  /** One line for people: who, and whether it is gone. */
  text: string;
}

/**
 * A run left `running` by a navi that was killed (`kill -9`) or lost its machine looks like a
 * running one in the database: its owner is gone when a `--resume` would take it over
 * (`takeoverVerdict`), so the listing says so, and how to go on.
 */
export function ownerReport(status: string, input: OwnershipInput): OwnerReport {
  const o = input.owner;
  const who = o === null ? 'unknown owner' : `pid ${o.pid} on ${o.host}`;
  if (status !== 'running') return { owner: o, alive: null, text: who };
  const mine = o !== null && o.pid === input.me.pid && o.host === input.me.host;
  const verdict = takeoverVerdict(input);
  const alive = mine || !verdict.ok;
  if (alive) return { owner: o, alive, text: who };
  const dead = o !== null && o.host === input.me.host && !input.isAlive(o.pid);
  const reason = dead ? 'its process has exited' : `no heartbeat for ${ago(input.now - input.updatedAt.getTime())}`;
  return { owner: o, alive, text: `${who} is gone (${reason})` };
}
