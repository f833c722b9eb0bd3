/**
 * GitHub Actions annotations for a loop run (`::error`/`::warning` workflow commands): an error
 * when the run did not complete (the gate's reason), one per check still failing in the last
 * iteration, and a warning per iteration whose exit signal the gate blocked (the model said
 * "done" without the evidence). Checks that failed earlier and passed later are history, not
 * annotations: the summary and the JUnit file keep them.
 */
import { gateFailure, type RunReport } from './run-report.js';

/** Escapes of a command's message (GitHub's toolkit: `%`, CR, LF). */
function escapeData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** Escapes of a property value (also `:` and `,`, which end a property). */
function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

function command(kind: 'error' | 'warning', title: string, message: string): string {
  return `::${kind} title=${escapeProperty(title)}::${escapeData(message)}`;
}

/** Lines to print, in order (none for a run that completed cleanly). */
export function githubAnnotations(report: RunReport): string[] {
  const out: string[] = [];
  const task = report.taskName;
  for (const it of report.iterations) {
    if (it.gateDecision === 'blocked') {
      out.push(command('warning', `navi loop ${task}: exit blocked in iteration ${it.iteration}`, it.gateReason ?? 'the exit gate blocked the exit signal'));
    }
  }
  const failure = gateFailure(report);
  if (failure !== null) {
    const last = report.iterations.at(-1);
    for (const c of last?.checks ?? []) {
      if (c.exitCode === 0 && !c.timedOut) continue;
      const why = c.timedOut ? 'timed out' : c.exitCode === null ? 'did not finish' : `exit code ${c.exitCode}`;
      const tail = c.outputTail.trim().split('\n').slice(-5).join('\n');
      out.push(command('error', `navi loop ${task}: check ${c.name} failing`, `${why} in iteration ${last?.iteration ?? 0}${tail !== '' ? `\n${tail}` : ''}`));
    }
    out.push(command('error', `navi loop ${task}: ${report.status}`, `${failure} (exit code ${report.exitCode ?? 'none'}; run ${report.runId})`));
  }
  return out;
}
