/**
 * Progress on stderr for a person at a terminal: an ora spinner showing "thinking…" and tool
 * activity. Off when stderr is not a TTY, under CI or with TERM=dumb. A terminal that reports 0
 * columns (`script`, `docker run -t` without a size) gets progress at `COLUMNS` or 80 columns:
 * ora divides by the width and would spin forever at ~80% CPU on 0 (STACK-NOTES).
 *
 * The spinner lives as long as the run: `pause` clears it while stdout is written (the
 * answer streaming, a status block), the next `update` brings it back. Only `stop` is final.
 * Without colour (`--no-color`, NO_COLOR) it draws no SGR code at all, only the frame.
 */
import type { Ora } from 'ora';

export interface Progress {
  update(text: string): void;
  /** A permanent line above the spinner (tool results). */
  log(line: string): void;
  /**
   * Runs `write` (a diagnostic on stderr) with the spinner line cleared, then draws the spinner
   * again if it was spinning: a warning does not end the progress.
   */
  aside(write: () => void): void;
  /** Clears the spinner line so stdout text is not interleaved with it; `update` resumes it. */
  pause(): void;
  /** Final: nothing is drawn after it. */
  stop(): void;
}

export interface ProgressOptions {
  enabled: boolean;
  stderr: NodeJS.WriteStream;
  env: Record<string, string | undefined>;
  color: boolean;
}

/** The width assumed for a terminal that reports none: what terminals open at. */
export const FALLBACK_COLUMNS = 80;

/** Whether a spinner may run on this stderr (pure; table-tested). */
export function spinnerAllowed(o: { isTTY: boolean; env: Record<string, string | undefined> }): boolean {
  return o.isTTY && !('CI' in o.env) && o.env.TERM !== 'dumb';
}

/**
 * The width progress is drawn for: the terminal's own, else `COLUMNS`, else 80 — never 0
 * (pure; table-tested).
 */
export function progressColumns(columns: number | undefined, env: Record<string, string | undefined>): number {
  if (columns !== undefined && columns > 0) return columns;
  const fromEnv = Number(env.COLUMNS);
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : FALLBACK_COLUMNS;
}

const noop: Progress = {
  update() {},
  log() {},
  aside(write) {
    write();
  },
  pause() {},
  stop() {},
};

/**
 * The spinner's text with the seconds spent on the current activity (a real model prefills for
 * minutes): `waiting for the model… 12 s`. A count already at the end (a heartbeat's) is replaced.
 */
export function withElapsed(text: string, elapsedMs: number): string {
  const secs = Math.floor(elapsedMs / 1000);
  return secs >= 1 ? `${activityOf(text)} ${secs} s` : text;
}

/** The activity a text names, without a trailing seconds count: its timer restarts when this changes. */
function activityOf(text: string): string {
  return text.replace(/ \d+ s$/, '');
}

export function createProgress(opts: ProgressOptions): Progress {
  if (!opts.enabled || !spinnerAllowed({ isTTY: opts.stderr.isTTY === true, env: opts.env })) return noop;
  // ora reads the width at every frame; a resize sets the real one again.
  if (!(opts.stderr.columns > 0)) opts.stderr.columns = progressColumns(opts.stderr.columns, opts.env);
  let spinner: Ora | null = null;
  let pendingText: string | null = null;
  let activity = '';
  let since = Date.now();
  const shown = (): string => withElapsed(pendingText ?? '', Date.now() - since);
  // Once a second the elapsed count moves on; never keeps the process alive.
  const tick = setInterval(() => {
    if (spinner?.isSpinning && pendingText !== null) spinner.text = shown();
  }, 1000);
  tick.unref();
  let stopped = false;
  // Paused while stdout is being written: the spinner may not come back (ora loading late included).
  let paused = false;
  // ora costs ~50 ms to import: load it only for a person at a terminal, without blocking.
  void import('ora').then(
    ({ default: ora }) => {
      if (stopped) return;
      // color false: ora draws the frame without any SGR code (chalk does not read NO_COLOR).
      spinner = ora({ stream: opts.stderr, color: opts.color ? 'cyan' : false, isEnabled: true, discardStdin: false });
      if (pendingText !== null && !paused) spinner.start(shown());
    },
    () => undefined,
  );
  return {
    update(text) {
      if (stopped) return;
      if (activityOf(text) !== activity) {
        activity = activityOf(text);
        since = Date.now();
      }
      pendingText = text;
      paused = false;
      if (spinner === null) return;
      if (spinner.isSpinning) spinner.text = shown();
      else spinner.start(shown());
    },
    log(line) {
      if (stopped) return;
      if (spinner?.isSpinning) {
        spinner.stopAndPersist({ symbol: '', text: line });
        if (pendingText !== null) spinner.start(shown());
      } else {
        opts.stderr.write(`${line}\n`);
      }
    },
    aside(write) {
      if (!spinner?.isSpinning) {
        write();
        return;
      }
      spinner.stop();
      write();
      if (pendingText !== null) spinner.start(shown());
    },
    pause() {
      paused = true;
      if (spinner?.isSpinning) spinner.stop();
    },
    stop() {
      stopped = true;
      clearInterval(tick);
      // ora's stop() rewinds the cursor even when idle, which would overwrite stdout text.
      if (spinner?.isSpinning) spinner.stop();
    },
  };
}
