/**
 * Runs a shell command in its own process group with a timeout, an AbortSignal and a
 * memory-bounded head+tail capture. Used by the `shell` tool; fits loop-mode `checks` too.
 */
import { spawn } from 'node:child_process';
import type { Sandbox } from '../sandbox/modes.js';
import { sandboxedSpawn } from '../sandbox/wrap.js';
import { setLongTimeout, type LongTimeout } from '../timers.js';
import { HeadTailCollector } from './output-cap.js';
import type { RedactFn } from './redact.js';

/** Time a process group gets between SIGTERM and SIGKILL: enough to flush and clean up. */
const KILL_GRACE_MS = 2000;

/** What to run and the limits it runs under. */
export interface RunCommandOptions {
  command: string;
  cwd: string;
  timeoutMs: number;
  /** Bytes of combined stdout+stderr kept (head + tail). */
  maxOutputBytes: number;
  signal: AbortSignal;
  env?: NodeJS.ProcessEnv;
  /** Override of the SIGTERM→SIGKILL grace, for tests. */
  killGraceMs?: number;
  /**
   * Redacts the output. Given here (not only later on the whole output) because the cap cuts
   * the output: only the collector knows where, and can drop a secret's pieces on both sides.
   */
  redact?: RedactFn;
  /** Run it inside this sandbox (the shell tool under `--sandbox`); absent: as navi runs. */
  sandbox?: Sandbox;
}

/** How a command ended; never thrown, an abort included (`aborted: true`). */
export interface RunCommandResult {
  /** stdout and stderr in arrival order, capped (and redacted, when `redact` was given). */
  output: string;
  /** Exit code, or null when the shell was ended by a signal or never started. */
  exitCode: number | null;
  /** Signal that ended the shell, when it was one. */
  exitSignal: NodeJS.Signals | null;
  timedOut: boolean;
  /** `signal` fired; the process group was killed. */
  aborted: boolean;
  /** The shell could not be started (e.g. cwd missing). */
  spawnError?: string;
  durationMs: number;
  /** Output bytes produced, kept or not. */
  totalBytes: number;
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/**
 * Process groups still running. If navi exits while one runs (a second Ctrl-C forces the exit
 * before the SIGKILL grace timer fires), they are killed on the way out: nothing outlives navi.
 */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function trackGroup(pid: number): void {
  liveGroups.add(pid);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const group of liveGroups) killGroup(group, 'SIGKILL');
    });
  }
}

/**
 * Spawns `/bin/sh -c command` detached (its own process group), stdin closed. On timeout or
 * abort the whole group gets SIGTERM, then SIGKILL after a grace period; after the shell
 * exits the group is killed too, so background children (`sleep 1000 &`) never outlive it.
 */
export async function runCommand(opts: RunCommandOptions): Promise<RunCommandResult> {
  const started = Date.now();
  const grace = opts.killGraceMs ?? KILL_GRACE_MS;
  const collector = new HeadTailCollector(opts.maxOutputBytes);
  const timers: NodeJS.Timeout[] = [];
  let timedOut = false;
  let aborted = false;

  const env = opts.env ?? process.env;
  // Inside a sandbox the launcher (bwrap, sandbox-exec) is the group leader: killing the group
  // reaches the shell and what it started as before.
  const spawned = opts.sandbox ? sandboxedSpawn(opts.sandbox, opts.command, env) : { file: '/bin/sh', args: ['-c', opts.command], env };
  const child = spawn(spawned.file, spawned.args, {
    cwd: opts.cwd,
    env: spawned.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const pid = child.pid;
  if (pid !== undefined) trackGroup(pid);
  child.stdout?.on('data', (chunk: Buffer) => collector.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => collector.push(chunk));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));

  const terminate = (): void => {
    if (pid === undefined) return;
    killGroup(pid, 'SIGTERM');
    timers.push(setTimeout(() => killGroup(pid, 'SIGKILL'), grace));
  };
  const onAbort = (): void => {
    aborted = true;
    terminate();
  };

  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: string }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', (err) => resolve({ code: null, signal: null, error: err.message }));
  });
  if (opts.signal.aborted) onAbort();
  else opts.signal.addEventListener('abort', onAbort, { once: true });
  // A long timeout (a check's `timeout_s: 3000000`) must not overflow Node's 24.8-day timer and fire at once.
  const timeout: LongTimeout = setLongTimeout(() => {
    timedOut = true;
    terminate();
  }, opts.timeoutMs);

  try {
    const ended = await exit;
    if (pid !== undefined && ended.error === undefined) {
      // Reap leftovers: background children still in the group (they may hold the pipes open).
      killGroup(pid, 'SIGTERM');
      const settled = await Promise.race([
        closed.then(() => true),
        new Promise<false>((resolve) => timers.push(setTimeout(() => resolve(false), grace))),
      ]);
      if (!settled) {
        killGroup(pid, 'SIGKILL');
        child.stdout?.destroy();
        child.stderr?.destroy();
      }
    }
    return {
      output: collector.text(opts.redact),
      exitCode: ended.code,
      exitSignal: ended.signal,
      timedOut,
      aborted,
      ...(ended.error !== undefined ? { spawnError: ended.error } : {}),
      durationMs: Date.now() - started,
      totalBytes: collector.totalBytes,
    };
  } finally {
    if (pid !== undefined) liveGroups.delete(pid);
    timeout.clear();
    for (const t of timers) clearTimeout(t);
    opts.signal.removeEventListener('abort', onAbort);
  }
}
