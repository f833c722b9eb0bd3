/**
 * Progress on stderr for a person at a terminal: an ora spinner showing "thinking…" and tool
 * activity. Off when stderr is not a TTY, under CI, with TERM=dumb, or when the terminal
 * reports 0 columns (ora spins forever at ~80% CPU there — STACK-NOTES).
 */
import type { Ora } from 'ora';

export interface Progress {
  update(text: string): void;
  /** A permanent line above the spinner (tool results). */
  log(line: string): void;
  /** Clears the spinner line so stdout text is not interleaved with it. */
  pause(): void;
  stop(): void;
}

export interface ProgressOptions {
  enabled: boolean;
  stderr: NodeJS.WriteStream;
  env: Record<string, string | undefined>;
  color: boolean;
}

/** Whether a spinner may run on this stderr (pure; table-tested). */
export function spinnerAllowed(o: { isTTY: boolean; columns: number | undefined; env: Record<string, string | undefined> }): boolean {
  return o.isTTY && (o.columns ?? 0) > 0 && !('CI' in o.env) && o.env.TERM !== 'dumb';
}

const noop: Progress = { update() {}, log() {}, pause() {}, stop() {} };

export function createProgress(opts: ProgressOptions): Progress {
  if (!opts.enabled || !spinnerAllowed({ isTTY: opts.stderr.isTTY === true, columns: opts.stderr.columns, env: opts.env })) return noop;
  let spinner: Ora | null = null;
  let pendingText: string | null = null;
  let stopped = false;
  // ora costs ~50 ms to import: load it only for a person at a terminal, without blocking.
  void import('ora').then(
    ({ default: ora }) => {
      if (stopped) return;
      spinner = ora({ stream: opts.stderr, color: 'cyan', isEnabled: true, discardStdin: false });
      if (!opts.color) spinner.color = 'white';
      if (pendingText !== null) spinner.start(pendingText);
    },
    () => undefined,
  );
  return {
    update(text) {
      if (stopped) return;
      pendingText = text;
      if (spinner === null) return;
      if (spinner.isSpinning) spinner.text = text;
      else spinner.start(text);
    },
    log(line) {
      if (stopped) return;
      if (spinner?.isSpinning) {
        spinner.stopAndPersist({ symbol: '', text: line });
        if (pendingText !== null) spinner.start(pendingText);
      } else {
        opts.stderr.write(`${line}\n`);
      }
    },
    pause() {
      if (spinner?.isSpinning) spinner.stop();
    },
    stop() {
      stopped = true;
      // ora's stop() rewinds the cursor even when idle, which would overwrite stdout text.
      if (spinner?.isSpinning) spinner.stop();
    },
  };
}
