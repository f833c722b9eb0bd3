/**
 * The reports CI systems read, written when `navi loop` ends (also after a failure, so a CI job
 * always finds its files): `--junit FILE` (JUnit XML), `--summary FILE` (Markdown), the same
 * Markdown appended to `$GITHUB_STEP_SUMMARY` when set, and `::error`/`::warning` annotations
 * on GitHub Actions (stdout in text mode; stderr in the JSON modes, whose stdout is JSON only —
 * the Actions runner reads workflow commands from both). Rendering is `src/report/`; this file
 * reads the stored run and writes files.
 */
import { appendFileSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { describeError, InvalidInputError, printable } from '../errors.js';
import { githubAnnotations } from '../report/annotations.js';
import { renderJunit } from '../report/junit.js';
import { renderMarkdown } from '../report/markdown.js';
import { buildRunReport, type RunReport } from '../report/run-report.js';
import type { Store } from '../store/types.js';
import type { CliHost } from './host.js';

export interface ReportArgs {
  junit?: string;
  summary?: string;
  output: 'text' | 'json' | 'stream-json';
}

export interface LoopReports {
  /**
   * Writes every report asked for. `runId` undefined: the run failed before it was created,
   * and the reports say so. Never throws: a report that cannot be written is said on stderr
   * (the run itself is stored; `navi runs show ID --format …` renders it again).
   */
  write(ctx: { store: Store | null; runId: string | undefined; taskName: string; exitCode: number; error?: string }): Promise<void>;
}

/**
 * Makes each report's folder before the run starts, as JUnit writers do (`reports/` in a fresh
 * CI checkout); exit 2 when it cannot be made (a file in the way, no permission).
 */
function checkTarget(flag: string, file: string | undefined, cwd: string): string | undefined {
  if (file === undefined) return undefined;
  if (file.trim() === '') throw new InvalidInputError('flag_invalid', `${flag} needs a file name`);
  const path = resolve(cwd, file);
  try {
    mkdirSync(dirname(path), { recursive: true });
  } catch (err) {
    throw new InvalidInputError('flag_invalid', `${flag} ${printable(file)}: cannot make its folder ${printable(dirname(path))} (${describeError(err)})`);
  }
  if (existsSync(path) && statSync(path).isDirectory()) throw new InvalidInputError('flag_invalid', `${flag} ${printable(file)} is a folder; name a file`);
  return path;
}

/** A report for a run that never started: no iterations, failed with the error's message. */
function unstartedReport(taskName: string, exitCode: number, error: string): RunReport {
  const now = new Date();
  return {
    runId: '(none)',
    taskName,
    status: 'failed',
    reason: error,
    exitCode,
    iteration: 0,
    maxIterations: 0,
    iterations: [],
    indicators: {},
    promptTokens: 0,
    completionTokens: 0,
    durationMs: 0,
    startedAt: now,
    finishedAt: now,
  };
}

/** Validates the flags now; returns the writer to call when the command ends. */
export function loopReports(args: ReportArgs, cwd: string, host: Pick<CliHost, 'env' | 'stdout' | 'stderr'>): LoopReports {
  const { env } = host;
  const junit = checkTarget('--junit', args.junit, cwd);
  const summary = checkTarget('--summary', args.summary, cwd);
  const stepSummary = env.GITHUB_STEP_SUMMARY !== undefined && env.GITHUB_STEP_SUMMARY !== '' ? env.GITHUB_STEP_SUMMARY : undefined;
  const onGithub = env.GITHUB_ACTIONS === 'true' || stepSummary !== undefined;
  const wanted = junit !== undefined || summary !== undefined || onGithub;
  return {
    async write(ctx) {
      if (!wanted) return;
      let report: RunReport;
      try {
        const run = ctx.runId !== undefined && ctx.store !== null ? await ctx.store.loopRuns.get(ctx.runId) : null;
        if (run !== null && ctx.store !== null) {
          report = buildRunReport(run, await ctx.store.loopRuns.listIterations(run.id), ctx.exitCode);
          // What ended the command (a replay mismatch and its diff) when the stored run does not say it.
          if (ctx.error !== undefined) report.error = ctx.error;
        } else {
          report = unstartedReport(ctx.taskName, ctx.exitCode, ctx.error ?? 'the run did not start');
        }
      } catch (err) {
        report = unstartedReport(ctx.taskName, ctx.exitCode, `${ctx.error ?? 'the run failed'}; its stored state could not be read (${describeError(err)})`);
      }
      const markdown = summary !== undefined || stepSummary !== undefined ? renderMarkdown(report) : '';
      const attempt = (what: string, fn: () => void): void => {
        try {
          fn();
        } catch (err) {
          const again = report.runId !== '(none)' ? `; render it again with: navi runs show ${report.runId} --format …` : '';
          host.stderr.write(`navi: could not write ${printable(what)} (${describeError(err)})${again}\n`);
        }
      };
      // The folders were made at the start; made again if the run's own work removed them.
      const write = (file: string, text: string): void => {
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, text);
      };
      if (junit !== undefined) attempt(`--junit ${args.junit ?? ''}`, () => write(junit, renderJunit(report)));
      if (summary !== undefined) attempt(`--summary ${args.summary ?? ''}`, () => write(summary, markdown));
      if (stepSummary !== undefined) attempt('GITHUB_STEP_SUMMARY', () => appendFileSync(stepSummary, `${markdown}\n`));
      if (onGithub) {
        const lines = githubAnnotations(report);
        if (lines.length > 0) (args.output === 'text' ? host.stdout : host.stderr).write(`${lines.join('\n')}\n`);
      }
    },
  };
}
