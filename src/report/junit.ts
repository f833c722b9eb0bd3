/**
 * A loop run as JUnit XML, the format Jenkins, GitLab and GitHub test reporters read (valid
 * against the Jenkins xUnit plugin's junit-10.xsd, checked in the tests). One `<testsuite>` per
 * committed iteration with one `<testcase>` per task check (a check that exited non-zero, or
 * did not finish, in the last iteration is a `<failure>` with its output tail; in an earlier
 * one it is history, said in `system-out` — `failureCounts`), or a single passing case with the
 * status block when the task has no checks; then a last suite with the `exit gate` case, which
 * fails — message: the gate's reason — unless the run completed.
 */
import { gateFailure, seconds, type CheckReport, type IterationReport, type RunReport } from './run-report.js';

/** XML 1.0 allows tab, newline, carriage return and these ranges; anything else (ANSI escapes in check output) is replaced. */
// eslint-disable-next-line no-control-regex
const XML_INVALID = /[^\u0009\u000A\u000D\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Text content: `&`, `<`, `>` escaped, characters XML cannot hold replaced with U+FFFD. */
export function xmlText(text: string): string {
  return text.replace(XML_INVALID, '\uFFFD').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** An attribute value (double-quoted): also quotes, and line breaks kept as character references. */
export function xmlAttr(text: string): string {
  return xmlText(text).replace(/"/g, '&quot;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;').replace(/\t/g, '&#9;');
}

/** `fix-tests` → `fix_tests`: a classname reporters group by, without dots of its own. */
function classPart(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '') || 'task';
}

/** JUnit's timestamp: ISO 8601 without zone designator, as Ant writes it (UTC). */
function timestamp(d: Date): string {
  return d.toISOString().slice(0, 19);
}

interface Case {
  name: string;
  classname: string;
  ms: number;
  failure?: { message: string; type: string; body: string };
  out?: string;
}

function attrs(pairs: Record<string, string | number>): string {
  return Object.entries(pairs)
    .map(([k, v]) => ` ${k}="${xmlAttr(String(v))}"`)
    .join('');
}

function renderCase(c: Case, indent: string): string {
  const open = `${indent}<testcase${attrs({ name: c.name, classname: c.classname, time: seconds(c.ms) })}`;
  const inner: string[] = [];
  if (c.failure !== undefined) {
    inner.push(`${indent}  <failure${attrs({ message: c.failure.message, type: c.failure.type })}>${xmlText(c.failure.body)}</failure>`);
  }
  if (c.out !== undefined && c.out !== '') inner.push(`${indent}  <system-out>${xmlText(c.out)}</system-out>`);
  return inner.length === 0 ? `${open}/>` : `${open}>\n${inner.join('\n')}\n${indent}</testcase>`;
}

function checkFailure(exitCode: number | null, timedOut: boolean): string {
  if (timedOut) return 'timed out';
  return exitCode === null ? 'did not finish' : `exit code ${exitCode}`;
}

/**
 * Whether a check that failed in an iteration is a `<failure>` of the report: only in the last
 * committed iteration, the state the run ended in. Earlier iterations are the way there (a
 * test red in iteration 1 and fixed in 2 is not a failure of the green run): their failing
 * checks are said in `system-out` and the suite's `failed_checks` property. Pure; table-tested.
 */
export function failureCounts(iteration: number, lastIteration: number): boolean {
  return iteration === lastIteration;
}

function isPassing(c: CheckReport): boolean {
  return c.exitCode === 0 && !c.timedOut;
}

function iterationCases(report: RunReport, it: IterationReport, lastIteration: number): Case[] {
  const classname = `navi.loop.${classPart(report.taskName)}.iteration_${it.iteration}`;
  if (it.checks.length === 0) {
    return [{ name: `iteration ${it.iteration}`, classname, ms: it.durationMs, out: it.statusBlock }];
  }
  return it.checks.map((c) => {
    const name = `check ${c.name}`;
    if (isPassing(c)) return { name, classname, ms: c.durationMs, out: c.outputTail };
    const what = `check "${c.name}" failed in iteration ${it.iteration}: ${checkFailure(c.exitCode, c.timedOut)}`;
    if (!failureCounts(it.iteration, lastIteration)) {
      return { name, classname, ms: c.durationMs, out: `${what} (an earlier iteration; the run's state is iteration ${lastIteration})\n${c.outputTail}` };
    }
    return { name, classname, ms: c.durationMs, failure: { message: what, type: 'check_failed', body: c.outputTail } };
  });
}

/** `tests (exit code 1), lint (timed out)`: the checks that failed in an iteration. */
function failedChecks(it: IterationReport): string {
  return it.checks
    .filter((c) => !isPassing(c))
    .map((c) => `${c.name} (${checkFailure(c.exitCode, c.timedOut)})`)
    .join(', ');
}

function suite(name: string, cases: Case[], ms: number, started: Date, props: Record<string, string>): string {
  const failures = cases.filter((c) => c.failure !== undefined).length;
  const head = `  <testsuite${attrs({ name, tests: cases.length, failures, errors: 0, skipped: 0, time: seconds(ms), timestamp: timestamp(started) })}>`;
  const properties = Object.entries(props).map(([k, v]) => `      <property${attrs({ name: k, value: v })}/>`);
  return [head, '    <properties>', ...properties, '    </properties>', ...cases.map((c) => renderCase(c, '    ')), '  </testsuite>'].join('\n');
}

/** The whole document (UTF-8, ending in a newline). */
export function renderJunit(report: RunReport): string {
  const suites: string[] = [];
  let tests = 0;
  let failures = 0;
  const count = (cases: Case[]): Case[] => {
    tests += cases.length;
    failures += cases.filter((c) => c.failure !== undefined).length;
    return cases;
  };
  const lastIteration = report.iterations.at(-1)?.iteration ?? 0;
  for (const it of report.iterations) {
    const cases = count(iterationCases(report, it, lastIteration));
    suites.push(
      suite(`${report.taskName} › iteration ${it.iteration}`, cases, it.durationMs, it.startedAt, {
        run_id: report.runId,
        phase: it.phase,
        state_hash: it.stateHash,
        gate_decision: it.gateDecision ?? '',
        gate_reason: it.gateReason ?? '',
        tokens: String(it.promptTokens + it.completionTokens),
        failed_checks: failedChecks(it),
      }),
    );
  }
  const failure = gateFailure(report);
  const last = report.iterations.at(-1);
  const gate: Case = {
    name: 'exit gate',
    classname: `navi.loop.${classPart(report.taskName)}`,
    ms: report.durationMs,
    ...(failure === null
      ? { out: last?.gateReason ?? 'completed' }
      : { failure: { message: failure, type: report.status, body: [report.error, last?.statusBlock].filter((t) => t !== undefined && t !== '').join('\n\n') } }),
  };
  suites.push(
    suite(`${report.taskName} › exit gate`, count([gate]), report.durationMs, report.startedAt, {
      run_id: report.runId,
      status: report.status,
      reason: report.reason ?? '',
      exit_code: report.exitCode === null ? 'running' : String(report.exitCode),
      iterations: `${report.iteration}/${report.maxIterations}`,
      prompt_tokens: String(report.promptTokens),
      completion_tokens: String(report.completionTokens),
    }),
  );
  const root = `<testsuites${attrs({ name: `navi loop ${report.runId}: ${report.taskName}`, tests, failures, errors: 0, time: seconds(report.durationMs) })}>`;
  return `<?xml version="1.0" encoding="UTF-8"?>\n${root}\n${suites.join('\n')}\n</testsuites>\n`;
}
