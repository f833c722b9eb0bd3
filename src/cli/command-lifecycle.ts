/**
 * The one lifecycle of the commands that run the agent (`run`, `loop`, `sessions compact`, and
 * the server to come; issue 18 item 8): the output renderer and the stop handlers first, then the
 * command's body (configuration loaded once → runtime → events), and in one place whatever
 * happens: a failure becomes an `error` event, a `result` and its exit code (`reportFailure`),
 * the recorder/replayer is settled only when the work was not stopped, and the output, store and
 * MCP servers are closed. A command that hands over to another (`run` entering loop mode)
 * detaches its output and handlers instead.
 */
import type { ModelExchanges } from './model-exchanges.js';
import { forcedExitResult, type Output } from './output.js';
import { installStopHandlers, type StopHandle } from './os-signals.js';
import { reportFailure } from './runtime.js';
import { createOutput } from './setup.js';
import type { GlobalArgs } from './global-args.js';
import type { CliHost } from './host.js';

/** What a command body gets: the output, the stop handle, and where to register what it opens. */
export interface CommandScope {
  output: Output;
  stop: StopHandle;
  started: number;
  /** The session and loop run of this invocation, as soon as they are known (for messages and results). */
  ids: {
    sessionId: string;
    runId?: string;
    /**
     * The session a failure's result may name, when naming `sessionId` needs a check: a new
     * session whose model never answered is not stored, so its id names nothing.
     */
    storedSession?: () => Promise<string>;
  };
  /** Closed when the command ends, in parallel, after the output (store, MCP servers). */
  onClose: (close: () => Promise<unknown> | undefined) => void;
  /** The output and handlers go on to another command (`release` disposes of them): not closed here. */
  detach: () => { release: () => void };
  /**
   * The model's exchanges are complete: a replay that mismatched or left calls unused fails now
   * (exit 2). Skipped when the run was stopped (a signal, a timeout): its recording is partial.
   */
  settle: (exchanges: ModelExchanges, stopped?: AbortSignal | null) => void;
}

export interface LifecycleOptions {
  /** Said on stderr (text mode) at the first SIGINT/SIGTERM: what stopping does. */
  stopping?: string;
  /** Why a second signal ended the command at once (its `result`'s message). */
  forcedExit?: (ids: CommandScope['ids']) => { message: string; extra?: Record<string, unknown> };
  /** After a failure's result is written (a loop writes its CI reports): gets the exit code and the error. */
  onFailure?: (code: number, err: unknown, scope: CommandScope) => Promise<void>;
}

/** Runs `body` inside the lifecycle; returns its exit code, or what it hands over. */
export async function withAgentCommand<T>(args: GlobalArgs, host: CliHost, opts: LifecycleOptions, body: (scope: CommandScope) => Promise<number | T>): Promise<number | T> {
  const started = Date.now();
  const output = createOutput(args, host);
  const ids: CommandScope['ids'] = { sessionId: '' };
  const closers: Array<() => Promise<unknown> | undefined> = [];
  let detached = false;
  const stop = installStopHandlers(
    opts.stopping === undefined
      ? undefined
      : (sig) => {
          if (output.mode === 'text' && !args.quiet) output.diagnostic(`\nnavi: ${sig} received, ${opts.stopping ?? ''} (Ctrl-C again to exit at once)`);
        },
    opts.forcedExit === undefined
      ? undefined
      : () => {
          const forced = opts.forcedExit?.(ids) ?? { message: '' };
          output.resultSync(forcedExitResult(started, forced.message, forced.extra ?? {}));
        },
    host.ownsProcess,
  );
  const scope: CommandScope = {
    output,
    stop,
    started,
    ids,
    onClose: (close) => void closers.push(close),
    detach: () => {
      detached = true;
      return {
        release: () => {
          stop.dispose();
          output.close();
        },
      };
    },
    settle: (exchanges, stopped) => {
      if (!stop.signal.aborted && stopped?.aborted !== true) exchanges.finish();
    },
  };
  try {
    const outcome = await body(scope);
    return typeof outcome === 'number' ? stop.finish(outcome) : outcome;
  } catch (err) {
    // A stop saves what was said (the prompt included): no lookup, which could queue behind the
    // very write that is stuck.
    const sessionId = ids.storedSession !== undefined && !stop.signal.aborted ? await ids.storedSession() : ids.sessionId;
    const code = await reportFailure(output, host.env, err, { interrupted: stop.signal.aborted, started, sessionId, ...(ids.runId !== undefined ? { runId: ids.runId } : {}) });
    await opts.onFailure?.(code, err, scope);
    return stop.finish(code);
  } finally {
    if (!detached) output.close();
    // Everything is saved before the result is written; a signal while closing exits at once.
    await Promise.all(closers.map((close) => Promise.resolve(close()).catch(() => undefined)));
  }
}
