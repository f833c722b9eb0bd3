/**
 * What the agent did in one loop iteration, read from the events of its turn (SPEC §7.2): the
 * files its tools read and wrote, the shell commands it ran with their exit codes (the shell
 * tool ends its output with `[exit code N]`), its loop_signal calls, and its final text. Only
 * successful calls count as reading or writing; a sub-agent's file work counts (it works in the
 * same directory) but its loop_signal calls do not (loops never nest).
 */
import { isAbsolute, posix, relative, sep } from 'node:path';
import type { AgentEvent } from '../agent/events.js';
import { isTestCommand, type TestRun } from './evidence.js';
import { LOOP_SIGNAL_TOOL } from './exit-signal.js';

/** Tools whose `path` argument is something the agent read. */
const READ_TOOLS = new Set(['read_file', 'list_dir', 'search_files']);

/** Tools whose `path` argument is something the agent changed. */
const WRITE_TOOLS = new Set(['write_file', 'edit_file']);

/** One shell command the agent ran. */
export interface ShellRun {
  command: string;
  /** From the `[exit code N]` line; null when it timed out, was killed or refused. */
  exitCode: number | null;
}

/** The iteration's activity. */
export interface IterationActivity {
  /** Paths read (relative to cwd, `/` separators), in first-seen order. */
  filesRead: string[];
  /** Paths written by file tools. */
  filesWritten: string[];
  /** Every shell command, in order. */
  shellRuns: ShellRun[];
  /** The shell commands that ran a test suite. */
  testRuns: TestRun[];
  /** Tool calls of the main agent, loop_signal not counted. */
  toolCalls: number;
  /** Arguments of the main agent's successful loop_signal calls, in order. */
  signalArgs: unknown[];
  /** The main agent's final text (its last stream_end). */
  finalText: string;
  /** The last tool call, as one line (`shell npm test`), for the stagnation block. */
  lastAction: string;
}

/** The last `[exit code N]` line of a shell result; null when it did not exit normally. */
export function shellExitCode(output: string): number | null {
  const lines = output.trimEnd().split('\n');
  const last = lines[lines.length - 1]?.trim() ?? '';
  const m = /^\[exit code (-?\d+)\]$/.exec(last);
  return m ? Number(m[1]) : null;
}

/**
 * A tool's path argument as the runner records it: relative to `cwd`, `/` separators, no
 * leading `./`; `.` for the directory itself. Undefined when not a string.
 */
export function normalizeToolPath(cwd: string, raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const trimmed = raw.trim();
  if (trimmed === '') return '.';
  const rel = isAbsolute(trimmed) ? relative(cwd, trimmed) : trimmed;
  const norm = posix.normalize(rel.split(sep).join('/')).replace(/^\.\/+/, '').replace(/\/+$/, '');
  return norm === '' ? '.' : norm;
}

function argsOf(raw: unknown): Record<string, unknown> {
  if (typeof raw === 'string') {
    try {
      const parsed: unknown = JSON.parse(raw);
      return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
    } catch {
      return {};
    }
  }
  return typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
}

/** Collects an iteration's activity from its events, one event at a time. */
export class ActivityCollector {
  private readonly read = new Set<string>();
  private readonly written = new Set<string>();
  private readonly shell: ShellRun[] = [];
  private readonly signals: unknown[] = [];
  private calls = 0;
  private text = '';
  private last = 'no tool calls';

  constructor(private readonly cwd: string) {}

  observe(ev: AgentEvent): void {
    if (ev.type === 'stream_end') {
      if (ev.is_subagent !== true) this.text = ev.text;
      return;
    }
    if (ev.type !== 'tool_call') return;
    const args = argsOf(ev.arguments);
    const main = ev.is_subagent !== true;
    if (ev.name === LOOP_SIGNAL_TOOL) {
      if (main && ev.ok) this.signals.push(args);
      return;
    }
    if (main) {
      this.calls++;
      this.last = describeCall(ev.name, args);
    }
    if (!ev.ok && ev.name !== 'shell') return;
    if (READ_TOOLS.has(ev.name)) {
      const p = normalizeToolPath(this.cwd, args.path ?? '.');
      if (p !== undefined) this.read.add(p);
    } else if (WRITE_TOOLS.has(ev.name)) {
      const p = normalizeToolPath(this.cwd, args.path);
      if (p !== undefined) this.written.add(p);
    } else if (ev.name === 'shell' && typeof args.command === 'string') {
      this.shell.push({ command: args.command, exitCode: shellExitCode(ev.output) });
    }
  }

  result(): IterationActivity {
    const shellRuns = [...this.shell];
    return {
      filesRead: [...this.read],
      filesWritten: [...this.written],
      shellRuns,
      testRuns: shellRuns.filter((r) => isTestCommand(r.command)).map((r) => ({ command: r.command, exitCode: r.exitCode })),
      toolCalls: this.calls,
      signalArgs: [...this.signals],
      finalText: this.text,
      lastAction: this.last,
    };
  }
}

function describeCall(name: string, args: Record<string, unknown>): string {
  const primary = args.command ?? args.path ?? args.pattern ?? args.action ?? args.task;
  const text = typeof primary === 'string' ? primary.replace(/\s+/g, ' ').trim() : '';
  const short = text.length > 60 ? `${text.slice(0, 59)}…` : text;
  return short === '' ? name : `${name} ${short}`;
}
