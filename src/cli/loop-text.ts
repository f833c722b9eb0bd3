/**
 * Loop events as a person reads them in text mode (SPEC §4, §7): the banner, NAVIGATOR_STATUS
 * blocks (when `show_status_block`), prompts and decisions, diversification, and the LOOP
 * COMPLETE block with the `{"v":2,"type":"exit",…}` line. Blocks go to stdout (they are the
 * run's output); short progress goes to the spinner on stderr.
 */
import type { AgentEvent } from '../agent/events.js';
import { renderLoopBanner } from '../loop/status-block.js';

/** Event types only loop mode emits. */
export const LOOP_EVENT_TYPES = [
  'loop_started',
  'iteration_started',
  'iteration_status',
  'exit_gate',
  'approval_requested',
  'approval_decision',
  'stagnation_detected',
  'diversified',
  'loop_complete',
] as const;

/** A loop event. */
export type LoopEvent = Extract<AgentEvent, { type: (typeof LOOP_EVENT_TYPES)[number] }>;

/** What text mode shows for one loop event. */
export interface LoopText {
  /** Printed on stdout as a block of its own (a newline is added). */
  out?: string;
  /** Spinner text on stderr (terminals only), after the iteration's `iteration N/M ·` prefix. */
  progress?: string;
}

/** Display options of the run. */
export interface LoopTextOptions {
  /** `loop_mode.show_status_block`: print NAVIGATOR_STATUS each iteration. */
  showStatusBlock: boolean;
}

/** True for the loop-mode event types. */
export function isLoopEvent(ev: AgentEvent): ev is LoopEvent {
  return (LOOP_EVENT_TYPES as readonly string[]).includes(ev.type);
}

/** The text of one loop event. */
export function loopEventText(ev: LoopEvent, opts: LoopTextOptions): LoopText {
  switch (ev.type) {
    case 'loop_started':
      return {
        out: renderLoopBanner({
          task: ev.task,
          maxIterations: ev.max_iterations,
          stagnationThreshold: ev.stagnation_threshold,
          startIteration: ev.start_iteration,
        }),
      };
    case 'iteration_started':
      // The spinner prefixes every activity of the iteration with `iteration N/M` (output.ts).
      return { progress: 'starting…' };
    case 'iteration_status': {
      const checks = checksLine(ev.evidence.checks);
      const parts = [opts.showStatusBlock ? ev.block : undefined, checks ?? undefined].filter((s): s is string => s !== undefined);
      return parts.length > 0 ? { out: parts.join('\n') } : {};
    }
    case 'exit_gate':
      if (ev.signal !== null && !ev.signal.accepted) return { out: `Exit signal not accepted: ${ev.signal.rejected ?? ev.reason}` };
      return ev.decision === 'blocked' ? { out: `Exit gate ${ev.reason}` } : {};
    case 'approval_requested': {
      // The STAGNATION / MAX ITERATIONS blocks list their options (seed 004): not twice.
      const options = blockListsOptions(ev.block) ? undefined : ev.options.map((o, i) => `  ${i + 1}. [${o}]`).join('\n');
      return { out: [ev.block, ev.question, options].filter((s) => s !== undefined && s !== '').join('\n') };
    }
    case 'approval_decision': {
      const where = ev.source === 'terminal' ? 'terminal' : ev.source === 'decisions_file' ? `decisions line ${ev.line ?? '?'}` : 'headless rule';
      return { out: `→ ${ev.choice}${ev.feedback ? `: ${ev.feedback}` : ''} (${where})` };
    }
    case 'stagnation_detected':
      return ev.action === 'abort' ? { out: ev.block } : {};
    case 'diversified':
      return { out: ev.block };
    case 'loop_complete':
      if (ev.status === 'completed' && ev.block !== undefined) {
        return { out: [ev.exit_line, ev.block].filter((s) => s !== undefined).join('\n') };
      }
      return { out: stoppedLine(ev) };
  }
}

/** True when a menu's block already lists its numbered options. */
export function blockListsOptions(block: string | undefined): boolean {
  return block !== undefined && /^Options:$/m.test(block);
}

type CheckSummary = Extract<LoopEvent, { type: 'iteration_status' }>['evidence']['checks'][number];

/** One check's result as a person reads it live: `tests passed (0.4 s)`, `lint failed (exit 1, 2.0 s)`. */
export function checkText(c: CheckSummary): string {
  const secs = `${(c.duration_ms / 1000).toFixed(1)} s`;
  if (c.timed_out) return `${c.name} timed out (${secs})`;
  if (c.exit_code === null) return `${c.name} did not finish (${secs})`;
  if (c.exit_code === 0) return `${c.name} passed (${secs})`;
  if (c.exit_code === 127) return `${c.name} could not run (exit 127: command not found)`;
  if (c.exit_code === 126) return `${c.name} could not run (exit 126: not executable)`;
  return `${c.name} failed (exit ${c.exit_code}, ${secs})`;
}

/** The iteration's `Checks:` line; null when the task has no checks. */
function checksLine(checks: readonly CheckSummary[]): string | null {
  return checks.length === 0 ? null : `Checks: ${checks.map(checkText).join(' · ')}`;
}

function stoppedLine(ev: Extract<LoopEvent, { type: 'loop_complete' }>): string {
  const lines = [`LOOP STOPPED: ${ev.status} (${ev.reason}) after ${ev.iterations}/${ev.max_iterations} iterations.`];
  if (ev.marker !== null) lines.push(`Marker: ${ev.marker}`);
  if (ev.resume_command !== undefined) lines.push(`Resume with: ${ev.resume_command}`);
  return lines.join('\n');
}
