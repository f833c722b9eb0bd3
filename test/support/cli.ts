/**
 * Runs the built CLI (`dist/cli/main.cjs`) as a subprocess, the way users and scripts do, with a
 * clean environment and a hard timeout so a hung run fails its test instead of the suite.
 * Stream-json output is parsed line by line as it arrives, so a test can wait for an event
 * (say `run_started`) and then send a signal.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

/** Repository root. */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The built entry point; `npm run build` writes it (`npm test` builds first).
 * `NAVI_SCENARIO_CLI` points the scenarios at another build (an installed package, a patched copy).
 */
export const CLI_PATH = process.env.NAVI_SCENARIO_CLI ?? path.join(REPO_ROOT, 'dist', 'cli', 'main.cjs');

/**
 * Default hard limit for one CLI run (a hang guard): far above any healthy run, loaded machine
 * included, and below the scenario tests' own limit (SCENARIO_TIMEOUT_MS, 60 s).
 */
const DEFAULT_TIMEOUT_MS = 40_000;

/** Fails early with a useful message when the CLI has not been built. */
export function assertBuilt(): void {
  if (!fs.existsSync(CLI_PATH)) throw new Error(`${CLI_PATH} is missing: run \`npm run build\` before the scenario tests`);
}

/** A JSON object read from one stdout line. */
export type JsonObject = Record<string, unknown>;

/** A signal to send once the run reaches some point. */
export interface SignalPlan {
  /** Event type (stream-json) to wait for before the first signal. */
  afterEvent: string;
  /**
   * Signals to send, in order: `['SIGINT']`, `['SIGINT', 'SIGINT']`. Each next one goes once the
   * previous one has been delivered (two pending at once would merge into one).
   */
  signals: NodeJS.Signals[];
}

export interface RunOptions {
  /** Working directory of the process (also navi's default `--cwd`). */
  cwd: string;
  /** The whole environment of the child (see `cleanEnv`). */
  env: Record<string, string>;
  /** Text (or bytes) piped to stdin; absent: stdin is /dev/null. */
  stdin?: string | Buffer;
  /** Hard kill (SIGKILL to the process group) after this long. */
  timeoutMs?: number;
  signalAfter?: SignalPlan;
}

export interface NaviResult {
  /** Exit code; null when killed by a signal (or by the timeout). */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout lines (without the trailing empty one). */
  lines: string[];
  /** Every stdout line that parsed as a JSON object, in order. */
  events: JsonObject[];
  /** stdout lines that did not parse as a JSON object. */
  badLines: string[];
  durationMs: number;
  /** The run hit `timeoutMs` and was killed. */
  timedOut: boolean;
  /** `Date.now()` when each planned signal was sent. */
  signalsSentAt: number[];
  /** `Date.now()` when the process exited. */
  exitedAt: number;
  pid: number;
}

/** A running CLI process. */
export interface NaviProcess {
  readonly child: ChildProcess;
  /** Parsed stdout lines so far. */
  readonly events: JsonObject[];
  /** Resolves with the first event of `type` (or matching `predicate`); rejects when the process ends first. */
  waitForEvent(type: string, predicate?: (ev: JsonObject) => boolean): Promise<JsonObject>;
  /** Sends a signal to navi itself (not its process group). */
  kill(signal: NodeJS.Signals): void;
  readonly result: Promise<NaviResult>;
}

/** A private directory under `base` (default the OS temp dir), removed by the caller (or left there). */
export function makeTempDir(prefix: string, base = os.tmpdir()): string {
  return fs.mkdtempSync(path.join(base, `navi-scn-${prefix}-`));
}

/** An empty private HOME for every run: no user config (`~/.config/navi`) leaks into a test. */
function emptyHome(): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  const home = path.join(os.tmpdir(), `navi-scn-home-${uid}`);
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  return home;
}

/**
 * A clean environment: PATH only, an empty private HOME (so `~/.config/navi/config.json` of
 * whoever runs the tests is not read), `CI=1` unless `ci: false`, plus `extra`.
 */
export function cleanEnv(extra: Record<string, string> = {}, opts: { ci?: boolean } = {}): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: emptyHome() };
  if (opts.ci !== false) env.CI = '1';
  return { ...env, ...suiteSettings(), ...extra };
}

/**
 * What the whole suite's runs of the CLI inherit from the test process, for tests that build an
 * environment of their own: the plain versions of the fast paths, their oracles (README,
 * Development), and the log of bench/cli-census.js when it stands in for the CLI (NAVI_SCENARIO_CLI).
 */
export function suiteSettings(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['NAVI_PGLITE_DRIVER', 'NAVI_PLAIN_BODIES', 'NAVI_CENSUS_LOG']) {
    const value = process.env[name];
    if (value) out[name] = value;
  }
  // The census says which test file started each process.
  if (out.NAVI_CENSUS_LOG !== undefined) out.NAVI_CENSUS_TEST = censusTestFile();
  return out;
}

/** The running test's file, relative to the repository (for bench/cli-census.js). */
export function censusTestFile(): string {
  const file = expect.getState().testPath;
  return file === undefined ? '' : path.relative(REPO_ROOT, file);
}

/** A stdout line as a JSON object, or undefined when it is not one. */
export function parseLine(line: string): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;
  } catch {
    return undefined;
  }
}

/** Starts `node dist/cli/main.cjs ...args`. */
export function startNavi(args: readonly string[], opts: RunOptions): NaviProcess {
  assertBuilt();
  const started = Date.now();
  // Its own process group, so the timeout can kill navi and anything it started.
  const child = spawn(process.execPath, [CLI_PATH, ...args], {
    cwd: opts.cwd,
    env: opts.env,
    stdio: [opts.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    detached: true,
  });
  if (opts.stdin !== undefined) {
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(opts.stdin);
  }

  const events: JsonObject[] = [];
  const badLines: string[] = [];
  const lines: string[] = [];
  let stdout = '';
  let stderr = '';
  let partial = '';
  let ended = false;
  const waiters: Array<{ match: (ev: JsonObject) => boolean; resolve: (ev: JsonObject) => void; reject: (err: Error) => void }> = [];

  const onLine = (line: string): void => {
    lines.push(line);
    const ev = parseLine(line);
    if (ev === undefined) {
      badLines.push(line);
      return;
    }
    events.push(ev);
    for (const w of waiters.splice(0)) {
      if (w.match(ev)) w.resolve(ev);
      else waiters.push(w);
    }
  };
  child.stdout?.setEncoding('utf8');
  child.stderr?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    stdout += chunk;
    partial += chunk;
    const parts = partial.split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) onLine(line);
  });
  child.stderr?.on('data', (chunk: string) => (stderr += chunk));

  let timedOut = false;
  const killGroup = (signal: NodeJS.Signals): void => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup('SIGKILL');
  }, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);

  const signalsSentAt: number[] = [];
  const kill = (signal: NodeJS.Signals): void => {
    if (ended) return;
    signalsSentAt.push(Date.now());
    child.kill(signal);
  };

  const result = new Promise<NaviResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const exitedAt = Date.now();
      ended = true;
      clearTimeout(timer);
      if (partial !== '') onLine(partial);
      for (const w of waiters.splice(0)) w.reject(new Error(`navi exited (code ${String(code)}) before the awaited event; stderr: ${stderr}`));
      resolve({
        code,
        signal,
        stdout,
        stderr,
        lines,
        events,
        badLines,
        durationMs: exitedAt - started,
        timedOut,
        signalsSentAt,
        exitedAt,
        pid: child.pid ?? -1,
      });
    });
  });

  const waitForEvent = (type: string, predicate?: (ev: JsonObject) => boolean): Promise<JsonObject> => {
    const match = (ev: JsonObject): boolean => ev.type === type && (predicate?.(ev) ?? true);
    const seen = events.find(match);
    if (seen) return Promise.resolve(seen);
    if (ended) return Promise.reject(new Error(`navi already exited without a ${type} event`));
    return new Promise((resolve, reject) => waiters.push({ match, resolve, reject }));
  };

  if (opts.signalAfter !== undefined) {
    const plan = opts.signalAfter;
    void waitForEvent(plan.afterEvent).then(
      async () => {
        for (const [i, sig] of plan.signals.entries()) {
          const previous = plan.signals[i - 1];
          if (previous !== undefined) await signalDelivered(child.pid ?? -1, previous);
          kill(sig);
        }
      },
      () => undefined,
    );
  }

  return { child, events, waitForEvent, kill, result };
}

/** Runs the CLI to completion (or to its hard timeout). */
export function runNavi(args: readonly string[], opts: RunOptions): Promise<NaviResult> {
  return startNavi(args, opts).result;
}

const SIGNAL_NUMBERS: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGUSR1: 10, SIGUSR2: 12, SIGTERM: 15 };

/**
 * Resolves once `signal` is no longer pending for process `pid` (Linux: the `ShdPnd` mask in
 * /proc): it has been delivered to the process's handler, so sending it again counts as a second
 * signal rather than merging with the first. Also resolves when the process is gone. Rejects
 * after a hang guard far above the real time (microseconds to milliseconds).
 */
export async function signalDelivered(pid: number, signal: NodeJS.Signals, timeoutMs = 30_000): Promise<void> {
  const bit = 1n << BigInt((SIGNAL_NUMBERS[signal] ?? 0) - 1);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let status: string;
    try {
      status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    } catch {
      return; // gone (or no /proc: nothing to wait for)
    }
    const pending = /^ShdPnd:\s*([0-9a-f]+)$/m.exec(status)?.[1];
    if (pending === undefined || (BigInt(`0x${pending}`) & bit) === 0n) return;
    if (Date.now() > deadline) throw new Error(`hang guard: ${signal} still pending for process ${pid} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** Lines of stderr that look like a stack trace frame. */
export function stackLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => /^\s+at /.test(l));
}

/** Whether `text` holds an ANSI escape sequence. */
export function hasAnsi(text: string): boolean {
  // eslint-disable-next-line no-control-regex
  return /\u001b\[/.test(text);
}
