/**
 * The three output modes of SPEC §4. The CLI is the only writer to stdout:
 * - text: the assistant's words on stdout; progress on stderr only for a person at a terminal;
 * - json: exactly one JSON object (the `result` event) on stdout at the end;
 * - stream-json: one event per line, written as it happens, ending with `result`.
 */
import { writeSync } from 'node:fs';
import type { AgentEvent, EventPayload, WireEvent } from '../agent/events.js';
import { SCHEMA_VERSION } from '../agent/schema-version.js';
import { EXIT } from '../errors.js';
import { isLoopEvent, loopEventText, type LoopTextOptions } from './loop-text.js';
import { createProgress, type Progress } from './spinner.js';
import { jsonLine, terminalSafe, unfinishedSequenceAt } from './terminal-text.js';

export type OutputMode = 'text' | 'json' | 'stream-json';

export interface OutputOptions {
  mode: OutputMode;
  quiet: boolean;
  color: boolean;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  env: Record<string, string | undefined>;
}

type ResultPayload = Omit<EventPayload<'result'>, never>;

/**
 * The `result` written when a second SIGINT/SIGTERM exits at once (no turn finished, nothing
 * counted): the same for `navi run` and `navi loop`, which add what they know (a run id).
 */
export function forcedExitResult(started: number, error: string, extra: Partial<ResultPayload> = {}): ResultPayload {
  return {
    status: 'interrupted',
    reason: 'forced_exit',
    exit_code: EXIT.interrupted,
    result: '',
    ...extra,
    num_turns: 0,
    usage: { prompt_tokens: 0, completion_tokens: 0 },
    duration_ms: Date.now() - started,
    errors: [error],
  };
}

/**
 * Longest unfinished escape sequence held back between streamed pieces; beyond it the piece is
 * printed with its controls removed (an OSC 52 payload may be long, but not this long in text).
 */
const MAX_HELD_BACK = 4096;

/** Renders agent events for one command invocation. */
export class Output {
  private seq = 0;
  private sessionId = '';
  private runId: string | undefined;
  private atLineStart = true;
  private wroteText = false;
  /** The end of the streamed answer that may be the start of an escape sequence. */
  private heldBack = '';
  private readonly progress: Progress;
  private loopText: LoopTextOptions = { showStatusBlock: true };
  /**
   * Which model reply the answer being streamed belongs to (agent path, loop and tool-loop
   * iteration), or null when none is open: a reply after a tool call or in the next iteration
   * starts a paragraph of its own instead of being glued to the last one.
   */
  private segment: string | null = null;
  /** A segment was written and closed: the next one starts after a blank line. */
  private segmentsWritten = false;
  /** Loop mode: `iteration 2/5`, shown before every activity of the iteration. */
  private progressPrefix = '';
  /** The tool running now (its label), so a heartbeat keeps saying which one. */
  private runningTool: string | null = null;
  /**
   * stdout is not a terminal (captured, piped, redirected): it gets the final answer alone,
   * exactly the `result` of `-o json` and a newline (`answerOnly`, README "Output").
   */
  private readonly answerOnly: boolean;
  /** answerOnly: the main agent's reply being written, not yet known to be the final one. */
  private pendingReply = '';
  /**
   * The main agent's `error` not yet shown: when the result that follows says the same, its
   * `navi: …` line is the one line of the failure (not the same message twice).
   */
  private pendingError: string | null = null;
  /** Text mode: the resume command the LOOP STOPPED block showed (the result need not repeat it). */
  private shownResume: string | null = null;

  constructor(private readonly opts: OutputOptions) {
    this.answerOnly = answerOnly(opts.stdout);
    this.progress = createProgress({
      enabled: opts.mode === 'text' && !opts.quiet,
      stderr: opts.stderr,
      env: opts.env,
      color: opts.color,
    });
  }

  get mode(): OutputMode {
    return this.opts.mode;
  }

  setSession(sessionId: string, runId?: string): void {
    this.sessionId = sessionId;
    this.runId = runId;
  }

  /** Loop mode's display settings (text mode). */
  setLoopDisplay(opts: LoopTextOptions): void {
    this.loopText = opts;
  }

  private envelope(type: string): WireEvent {
    const ev: WireEvent = {
      type,
      schema_version: SCHEMA_VERSION,
      seq: this.seq++,
      ts: new Date().toISOString(),
      session_id: this.sessionId,
    };
    if (this.runId !== undefined) ev.run_id = this.runId;
    return ev;
  }

  private writeLine(obj: WireEvent): void {
    this.opts.stdout.write(`${jsonLine(obj)}\n`);
  }

  /** Writes text to stdout in text mode, tracking whether the last char was a newline. */
  private text(s: string): void {
    if (s.length === 0) return;
    this.progress.pause();
    this.opts.stdout.write(s);
    this.atLineStart = s.endsWith('\n');
    this.wroteText = true;
  }

  /** The model's answer as it streams: control sequences removed, also when split across pieces. */
  private streamed(piece: string): void {
    const joined = this.heldBack + piece;
    let cut = unfinishedSequenceAt(joined);
    if (joined.length - cut > MAX_HELD_BACK) cut = joined.length;
    this.heldBack = joined.slice(cut);
    this.text(terminalSafe(joined.slice(0, cut)));
  }

  /** What is left of the streamed answer (an escape sequence that never finished). */
  private flushStreamed(): void {
    const rest = this.heldBack;
    this.heldBack = '';
    this.text(terminalSafe(rest));
  }

  /**
   * A diagnostic for people: stderr, in every mode (never stdout in json modes). Warnings quote
   * the model's commands: control sequences are removed.
   */
  diagnostic(message: string): void {
    this.progress.aside(() => this.opts.stderr.write(`${terminalSafe(message)}\n`));
  }

  event(ev: AgentEvent): void {
    if (this.opts.mode === 'stream-json') {
      this.writeLine({ ...this.envelope(ev.type), ...ev });
      return;
    }
    if (this.opts.mode === 'json') {
      if (ev.type === 'warning' && !this.opts.quiet) this.opts.stderr.write(`warning: ${terminalSafe(ev.message)}\n`);
      return;
    }
    this.renderText(ev);
  }

  /** A block of text on stdout, on lines of its own with a blank line before it. */
  private block(s: string): void {
    this.endSegment();
    this.progress.pause();
    this.text(`${this.atLineStart ? (this.wroteText ? '\n' : '') : '\n\n'}${terminalSafe(s)}\n`);
  }

  /**
   * The end of the answer streamed so far: what was held back is printed and the line ended,
   * so the spinner (stderr) and the next paragraph start on a line of their own.
   */
  private endSegment(): void {
    this.flushStreamed();
    if (this.segment === null) return;
    this.segment = null;
    this.segmentsWritten = true;
    if (!this.atLineStart) this.text('\n');
  }

  /** The spinner shows `activity` (with the loop iteration in loop mode); the answer's line is ended first. */
  private activity(activity: string, ev?: AgentEvent): void {
    this.endSegment();
    // A sub-agent's steps say whose they are (the parent's tool call is still running).
    const agent = ev?.is_subagent === true ? ev.agent_path?.at(-1) : undefined;
    const text = agent === undefined ? activity : `${terminalSafe(agent)}: ${activity}`;
    this.progress.update(this.progressPrefix === '' ? text : `${this.progressPrefix} · ${text}`);
  }

  private answerText(ev: Extract<AgentEvent, { type: 'text_delta' }>): void {
    // A sub-agent's answer is the parent's tool result, not the answer: progress only.
    if (ev.is_subagent === true) {
      this.activity('writing…', ev);
      return;
    }
    if (this.answerOnly) {
      // Final answer or words before a tool call? Known only when the reply ends.
      this.pendingReply += ev.text;
      this.activity('writing…', ev);
      return;
    }
    this.writeAnswer(`@${ev.loop_iteration ?? ''}.${ev.iteration ?? ''}`, ev.text);
  }

  /**
   * answerOnly: the main agent's reply turned out to be words before a tool call, not the
   * answer. A person at a terminal sees them on stderr; a script gets nothing.
   */
  private intermediateReply(): void {
    const words = this.pendingReply.trim();
    this.pendingReply = '';
    if (words.length > 0) this.progress.log(terminalSafe(words));
  }

  /** Answer text on stdout, in paragraphs: one per model reply (`key`). */
  private writeAnswer(key: string, text: string): void {
    if (this.segment !== key) {
      this.endSegment();
      if (this.segmentsWritten) this.text('\n');
      this.segment = key;
    }
    this.progress.pause();
    this.streamed(text);
  }

  /** Shows the held-back `error` (something other than the run's end came after it). */
  private flushError(): void {
    if (this.pendingError === null) return;
    const message = this.pendingError;
    this.pendingError = null;
    this.diagnostic(`error: ${message}`);
  }

  private renderText(ev: AgentEvent): void {
    // The turn's end and heartbeats may come between an error and the result that repeats it.
    if (ev.type !== 'stream_end' && ev.type !== 'heartbeat') this.flushError();
    if (isLoopEvent(ev)) {
      if (ev.type === 'iteration_started') this.progressPrefix = `iteration ${ev.iteration ?? '?'}/${ev.max_iterations}`;
      if (ev.type === 'loop_complete') {
        this.progressPrefix = '';
        if (ev.resume_command !== undefined) this.shownResume = ev.resume_command;
      }
      const shown = loopEventText(ev, this.loopText);
      if (shown.out !== undefined) this.block(shown.out);
      if (shown.progress !== undefined) this.activity(terminalSafe(shown.progress));
      return;
    }
    switch (ev.type) {
      case 'text_delta':
        this.answerText(ev);
        break;
      case 'thinking_delta':
        this.activity('thinking…', ev);
        break;
      case 'tool_started':
        if (ev.is_subagent !== true) {
          this.runningTool = toolLabel(ev.name, ev.arguments);
          this.intermediateReply();
        }
        this.activity(toolLabel(ev.name, ev.arguments), ev);
        break;
      case 'tool_call':
        this.endSegment();
        this.progress.log(`${ev.is_subagent === true ? `  ${terminalSafe(ev.agent_path?.at(-1) ?? 'sub-agent')}: ` : ''}${ev.ok ? '✓' : '✗'} ${toolLabel(ev.name, ev.arguments)} (${Math.round(ev.duration_ms)} ms)`);
        // The next step after a tool is the model reading its result (or the next tool, which says so).
        if (ev.is_subagent !== true) this.runningTool = null;
        this.activity('waiting for the model…', ev);
        break;
      case 'warning':
        if (!this.opts.quiet) this.diagnostic(`warning: ${ev.message}`);
        break;
      case 'error':
        if (ev.is_subagent === true) this.diagnostic(`error: ${ev.message}`);
        else this.pendingError = ev.message;
        break;
      case 'heartbeat':
        // Mid-line in the answer (the model paused while writing), a spinner would break the line.
        if (this.segment !== null && !this.atLineStart) break;
        this.activity(`${ev.waiting_for === 'model' ? 'waiting for the model…' : (this.runningTool ?? 'tool running…')} ${Math.round(ev.elapsed_ms / 1000)} s`, ev);
        break;
      case 'run_started':
        this.activity('waiting for the model…', ev);
        break;
      case 'compression_started':
        this.activity('compressing the conversation…', ev);
        break;
      case 'stream_end':
        // The turn's answer is complete; in loop mode the runner now gathers evidence (checks
        // may run for minutes), in one shot navi saves and may extract memories.
        if (this.answerOnly && ev.is_subagent !== true) {
          // The turn's final text, as the result carries it (a structured answer included).
          this.pendingReply = '';
          if (ev.text.length > 0) this.writeAnswer(`@${ev.loop_iteration ?? ''}`, ev.text);
        }
        this.endSegment();
        // A sub-agent's end is the parent's tool finishing: its tool_call follows.
        if (ev.is_subagent !== true) this.activity(this.progressPrefix === '' ? 'finishing…' : 'checking the evidence…');
        break;
      case 'model_info':
      case 'thinking_end':
      case 'todo_updated':
      case 'planning_status':
      case 'plan_ready':
      case 'context_compressed':
        break;
      default: {
        const never: never = ev;
        void never;
      }
    }
  }

  /** The final event. Returns once stdout has taken it. */
  async result(payload: ResultPayload): Promise<void> {
    this.progress.stop();
    if (this.opts.mode === 'text') {
      this.flushStreamed();
      if (this.wroteText && !this.atLineStart) this.text('\n');
      if (this.pendingError !== null && !payload.errors.includes(this.pendingError)) this.flushError();
      this.pendingError = null;
      if (payload.status !== 'success') {
        // The block on stdout said "Resume with: …" already: one line says the run stopped.
        const errors = payload.errors.filter((e) => !repeatsResume(e, this.shownResume));
        for (const e of errors) this.diagnostic(`navi: ${e}`);
        if (errors.length === 0) this.diagnostic(`navi: ${payload.status} (${payload.reason})`);
      }
    } else {
      this.writeLine({ ...this.envelope('result'), ...payload });
      if (payload.status !== 'success' && !this.opts.quiet) for (const e of payload.errors) this.opts.stderr.write(`navi: ${terminalSafe(e)}\n`);
    }
    await drain(this.opts.stdout);
  }

  /**
   * The final event written synchronously, for a forced exit (second Ctrl-C) where there is no
   * time to wait for the stream. Text mode writes nothing to stdout.
   */
  resultSync(payload: ResultPayload): void {
    this.progress.stop();
    if (this.opts.mode === 'text') return;
    try {
      writeSync(1, `${jsonLine({ ...this.envelope('result'), ...payload })}\n`);
    } catch {
      // stdout is gone or full: nothing more can be said.
    }
  }

  close(): void {
    this.progress.stop();
  }
}

/**
 * Whether an error line is the resume hint (`resume with: navi loop --resume RUN …`) of a command
 * the LOOP STOPPED block showed already (the same command, or the block's with more flags).
 */
export function repeatsResume(error: string, shown: string | null): boolean {
  const hint = /^resume with: (.+)$/i.exec(error);
  return shown !== null && hint?.[1] !== undefined && shown.startsWith(hint[1]);
}

/**
 * Whether text mode's stdout gets the final answer alone (not a terminal: `answer=$(navi run …)`,
 * a pipe, a file) rather than every reply streamed as it is written (a person at a terminal).
 */
export function answerOnly(stdout: { isTTY?: boolean }): boolean {
  return stdout.isTTY !== true;
}

/** A tool call for the progress line: the model chose the name and the arguments. */
function toolLabel(name: string, args: unknown): string {
  const summary = summariseArgs(args);
  return terminalSafe(summary ? `${name} ${summary}` : name);
}

/** One short line describing tool arguments for progress output. */
export function summariseArgs(args: unknown): string {
  if (typeof args !== 'object' || args === null) return '';
  const record = args as Record<string, unknown>;
  const primary = record.command ?? record.path ?? record.pattern ?? record.action ?? record.task;
  const text = typeof primary === 'string' ? primary : '';
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > 60 ? `${oneLine.slice(0, 57)}…` : oneLine;
}

/** Resolves once everything written to `stream` has been handed to the OS. */
export function drain(stream: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => {
    stream.write('', () => resolve());
  });
}
