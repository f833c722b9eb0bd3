/**
 * A loop run as GitHub-flavoured Markdown: what `navi loop` appends to `GITHUB_STEP_SUMMARY`,
 * writes with `--summary FILE`, and `navi runs show ID --format md` prints. A heading with the
 * outcome, a table of outcome, exit code, iterations, tokens and time, the last indicators, a
 * table of iterations, and each iteration's status block collapsed in `<details>`.
 */
import { gateFailure, humanDuration, type CheckReport, type IterationReport, type RunReport } from './run-report.js';

/** Markdown that is text: characters that would format, link or break a table cell escaped. */
export function mdText(text: string): string {
  return text
    .replace(/\r?\n/g, ' ')
    .replace(/[\\`*_{}[\]()#+!|<>~]/g, (c) => `\\${c}`)
    .replace(/^(\s*)-/, '$1\\-');
}

/** A fence longer than any run of backticks inside `text`, so a status block cannot close it. */
function fence(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  return '`'.repeat(Math.max(3, longest + 1));
}

/** Text inside HTML (`<summary>`): escaped as HTML. */
function htmlText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r?\n/g, ' ');
}

const STATUS_ICON: Readonly<Record<string, string>> = {
  completed: '✅',
  incomplete: '⚠️',
  budget_exhausted: '⚠️',
  interrupted: '⏹️',
  aborted: '❌',
  failed: '❌',
  running: '⏳',
};

function indicatorList(indicators: Record<string, boolean | 'skipped'>): string {
  const parts = Object.entries(indicators).map(([name, v]) => (v === 'skipped' ? `➖ ${mdText(name)} (skipped)` : `${v ? '✅' : '❌'} ${mdText(name)}`));
  return parts.length === 0 ? '(no iteration committed)' : parts.join(' · ');
}

function checkCell(checks: readonly CheckReport[]): string {
  if (checks.length === 0) return '—';
  return checks
    .map((c) => {
      const ok = c.exitCode === 0 && !c.timedOut;
      const why = ok ? '' : c.timedOut ? ' (timed out)' : c.exitCode === null ? ' (did not finish)' : ` (exit ${c.exitCode})`;
      return `${ok ? '✅' : '❌'} ${mdText(c.name)}${why}`;
    })
    .join('<br>');
}

function tokens(prompt: number, completion: number): string {
  return (prompt + completion).toLocaleString('en-US');
}

function iterationRow(it: IterationReport): string {
  // The gate's reason starts with its decision (`BLOCKED: …`, `EXIT: …`); the bare decision otherwise.
  const gate = it.gateReason ? mdText(it.gateReason) : it.gateDecision === null ? '—' : mdText(it.gateDecision);
  return `| ${it.iteration} | ${mdText(it.phase)} | ${gate} | ${checkCell(it.checks)} | ${tokens(it.promptTokens, it.completionTokens)} | ${humanDuration(it.durationMs)} |`;
}

function iterationDetails(it: IterationReport): string[] {
  const f = fence(it.statusBlock);
  const failing = it.checks.filter((c) => c.exitCode !== 0 || c.timedOut);
  const out = [
    '<details>',
    `<summary>Iteration ${it.iteration}: ${htmlText(it.phase)}, gate ${htmlText(it.gateDecision ?? 'not reached')}, state ${htmlText(it.stateHash)}</summary>`,
    '',
    `${f}text`,
    it.statusBlock.replace(/\s+$/, ''),
    f,
  ];
  for (const c of failing) {
    const g = fence(c.outputTail);
    out.push('', `Check **${mdText(c.name)}** output (end):`, '', `${g}text`, c.outputTail.replace(/\s+$/, '') || '(no output)', g);
  }
  out.push('', '</details>');
  return out;
}

/** The summary document (ends with a newline). */
export function renderMarkdown(report: RunReport): string {
  const icon = STATUS_ICON[report.status] ?? '';
  const lines = [
    `## ${icon} navi loop: ${mdText(report.taskName)} — ${mdText(report.status)}`,
    '',
    '| outcome | exit code | iterations | tokens | time |',
    '|---|---|---|---|---|',
    `| ${mdText(report.status)}${report.reason ? ` (${mdText(report.reason)})` : ''} | ${report.exitCode ?? 'running'} | ${report.iteration} of ${report.maxIterations} | ${tokens(report.promptTokens, report.completionTokens)} (prompt ${report.promptTokens.toLocaleString('en-US')}, completion ${report.completionTokens.toLocaleString('en-US')}) | ${humanDuration(report.durationMs)} |`,
    '',
  ];
  const failure = gateFailure(report);
  if (failure !== null) {
    // An error's lines (a replay mismatch's diff) keep their layout in a block of their own.
    const [first = failure] = report.error === undefined ? [failure] : failure.split('\n');
    lines.push(`> **Not completed:** ${mdText(first)}`, '');
    if (report.error !== undefined) {
      const f = fence(report.error);
      lines.push(`${f}text`, report.error, f, '');
    }
  }
  lines.push(`**Indicators** (last iteration): ${indicatorList(report.indicators)}`, '');
  // A run that never started has no id to show.
  if (report.runId.startsWith('run_')) lines.push(`Run \`${report.runId}\` · started ${report.startedAt.toISOString()}`, '');
  if (report.iterations.length > 0) {
    lines.push('### Iterations', '', '| # | phase | exit gate | checks | tokens | time |', '|---|---|---|---|---|---|');
    for (const it of report.iterations) lines.push(iterationRow(it));
    lines.push('');
    for (const it of report.iterations) lines.push(...iterationDetails(it), '');
  }
  return `${lines.join('\n').replace(/\n+$/, '')}\n`;
}
