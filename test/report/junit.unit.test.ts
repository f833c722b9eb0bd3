/**
 * `renderJunit`: table-driven over the shapes of run a CI meets (completed, checks failing,
 * no checks, never started, hostile text), each validated against the Jenkins xUnit plugin's
 * junit-10.xsd (test/fixtures/schemas/, source noted there) with libxml2 compiled to
 * WebAssembly (xmllint-wasm), plus the counts and messages reporters show.
 */
import { describe, expect, it } from 'vitest';
import { failureCounts, renderJunit } from '../../src/report/junit.js';
import { buildRunReport } from '../../src/report/run-report.js';
import type { LoopIterationRecord, LoopRunRecord } from '../../src/store/loop-run-types.js';
import { validateJunit } from '../support/junit-xsd.js';
import { storedIteration, storedRun } from './report-fixtures.js';

const validate = validateJunit;

/** An attribute's values over all elements of a kind, entities decoded (what a reporter shows). */
function attr(xml: string, element: string, name: string): string[] {
  const decode = (v: string): string =>
    v.replace(/&(#(\d+)|quot|amp|lt|gt|apos);/g, (_m, e: string, n: string | undefined) =>
      n !== undefined ? String.fromCharCode(Number(n)) : ({ quot: '"', amp: '&', lt: '<', gt: '>', apos: "'" } as Record<string, string>)[e] ?? '',
    );
  return [...xml.matchAll(new RegExp(`<${element}\\b[^>]*?\\s${name}="([^"]*)"`, 'g'))].map((m) => decode(m[1] ?? ''));
}

interface Case {
  name: string;
  run: LoopRunRecord;
  iterations: LoopIterationRecord[];
  exitCode?: number;
  /** testsuites tests / failures. */
  totals: [number, number];
  /** Testcase names in order. */
  cases: string[];
  /** Failure messages in order. */
  failures: RegExp[];
  /** What the command ended with beside the stored run (`RunReport.error`). */
  error?: string;
  /** system-out texts that must be there (in order, among all). */
  outs?: RegExp[];
  /** Iteration suites' property values, by property name. */
  properties?: Record<string, string[]>;
}

const ANSI = '\u001b[31mred\u001b[0m';

const CASES: Case[] = [
  {
    name: 'completed after a failing first iteration',
    run: storedRun(),
    iterations: [
      storedIteration(1, { checks: [{ name: 'tests', exit: 1, out: 'FAIL add(2, 3) = -1' }, { name: 'lint', exit: 0 }] }),
      storedIteration(2, { gateDecision: 'exit', gateReason: 'EXIT: 2/5 heuristics + explicit signal', checks: [{ name: 'tests', exit: 0 }, { name: 'lint', exit: 0 }] }),
    ],
    // Issue 18, item 16: iteration 1's red test is history, not a failure of the green run.
    totals: [5, 0],
    cases: ['check tests', 'check lint', 'check tests', 'check lint', 'exit gate'],
    failures: [],
    outs: [/^check "tests" failed in iteration 1: exit code 1 \(an earlier iteration; the run's state is iteration 2\)\nFAIL add\(2, 3\) = -1$/],
    properties: { failed_checks: ['tests (exit code 1)', ''] },
  },
  {
    name: 'max iterations: the gate case fails with the gate reason',
    run: storedRun({ status: 'incomplete', reason: 'max_iterations', iteration: 2, maxIterations: 2, finishedAt: null }),
    iterations: [
      storedIteration(1, { checks: [{ name: 'tests', exit: null, timedOut: true }] }),
      storedIteration(2, { gateDecision: 'blocked', gateReason: 'BLOCKED: Exit signal but only 1/5 heuristics', checks: [{ name: 'tests', exit: 2 }] }),
    ],
    totals: [3, 2],
    cases: ['check tests', 'check tests', 'exit gate'],
    failures: [/exit code 2$/, /^incomplete \(max_iterations\): the exit gate said: BLOCKED: Exit signal but only 1\/5 heuristics$/],
    outs: [/^check "tests" failed in iteration 1: timed out \(an earlier iteration/],
    properties: { failed_checks: ['tests (timed out)', 'tests (exit code 2)'] },
  },
  {
    name: 'a task without checks: one passing case per iteration',
    run: storedRun({ iteration: 1 }),
    iterations: [storedIteration(1, { gateDecision: 'exit', gateReason: 'EXIT: 2/5 heuristics + explicit signal' })],
    totals: [2, 0],
    cases: ['iteration 1', 'exit gate'],
    failures: [],
  },
  {
    name: 'failed before any iteration, with the real exit code',
    run: storedRun({ status: 'failed', reason: 'replay_mismatch', iteration: 0 }),
    iterations: [],
    exitCode: 2,
    totals: [1, 1],
    cases: ['exit gate'],
    failures: [/^failed \(replay_mismatch\): no iteration was committed$/],
  },
  {
    name: 'ended by an error the stored run does not say (a replay mismatch): the error and its diff',
    run: storedRun({ status: 'failed', reason: 'replay_mismatch', iteration: 0 }),
    iterations: [],
    exitCode: 2,
    error: 'replay mismatch at model call 1: the request differs\n- "content": "Fix it."\n+ "content": "Fix it now."',
    totals: [1, 1],
    cases: ['exit gate'],
    failures: [/^failed \(replay_mismatch\): replay mismatch at model call 1: the request differs\n- "content": "Fix it."\n\+ "content": "Fix it now."$/],
  },
  {
    name: 'hostile names and output: quotes, markup, control characters',
    run: storedRun({ taskName: 'fix "x" <&> \'y\'', status: 'aborted', reason: 'stagnation' }),
    iterations: [storedIteration(1, { statusBlock: `block ${ANSI} ]]> <tag/>`, gateReason: 'why?\nline two', checks: [{ name: 'a&b "c"', exit: 1, out: `${ANSI}\u0000\u0007 & <x> ]]>` }] })],
    totals: [2, 2],
    cases: ['check a&b "c"', 'exit gate'],
    failures: [/^check "a&b "c"" failed in iteration 1: exit code 1$/, /^aborted \(stagnation\): the exit gate said: why\?\nline two$/],
  },
];

describe('failureCounts', () => {
  it.each([
    [1, 2, false],
    [2, 2, true],
    [1, 1, true],
  ])('a failing check in iteration %i of %i is a failure: %s', (iteration, last, want) => {
    expect(failureCounts(iteration, last)).toBe(want);
  });
});

describe('renderJunit', () => {
  for (const c of CASES) {
    it(`${c.name}: valid against junit-10.xsd, with the expected cases`, async () => {
      const report = buildRunReport(c.run, c.iterations, c.exitCode);
      if (c.error !== undefined) report.error = c.error;
      const xml = renderJunit(report);
      const result = await validate(xml);
      expect(result.errors).toEqual([]);
      expect(result.valid).toBe(true);
      expect(attr(xml, 'testsuites', 'tests')).toEqual([String(c.totals[0])]);
      expect(attr(xml, 'testsuites', 'failures')).toEqual([String(c.totals[1])]);
      expect(attr(xml, 'testcase', 'name')).toEqual(c.cases);
      const messages = attr(xml, 'failure', 'message');
      expect(messages).toHaveLength(c.failures.length);
      for (const [i, re] of c.failures.entries()) expect(messages[i]).toMatch(re);
      const outs = [...xml.matchAll(/<system-out>([^<]*)<\/system-out>/g)].map((m) => (m[1] ?? '').replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>'));
      for (const re of c.outs ?? []) expect(outs.some((o) => re.test(o)), `a system-out matching ${String(re)} in ${JSON.stringify(outs)}`).toBe(true);
      for (const [name, values] of Object.entries(c.properties ?? {})) {
        const found = [...xml.matchAll(new RegExp(`<property name="${name}" value="([^"]*)"/>`, 'g'))].map((m) => m[1]);
        expect(found).toEqual(values);
      }
      // Suite counts add up to the root's.
      const sum = (name: string): number => attr(xml, 'testsuite', name).reduce((a, b) => a + Number(b), 0);
      expect([sum('tests'), sum('failures')]).toEqual(c.totals);
      // eslint-disable-next-line no-control-regex
      expect(xml).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/);
    });
  }

  it('the validator is real: a suite without its required counts is refused', async () => {
    const xml = renderJunit(buildRunReport(storedRun(), [])).replace(/ tests="\d+" failures="\d+" errors="0" skipped/, ' skipped');
    const result = await validate(xml);
    expect(result.valid).toBe(false);
    expect(result.errors.join('\n')).toMatch(/tests.*required|required.*tests/i);
  });

  it('times are seconds with three decimals (the XSD pattern reporters parse)', () => {
    const xml = renderJunit(buildRunReport(storedRun(), [storedIteration(1, { durationMs: 1_234_567 })]));
    for (const t of attr(xml, 'testsuite', 'time')) expect(t).toMatch(/^\d+\.\d{3}$/);
    expect(attr(xml, 'testsuite', 'time')[0]).toBe('1234.567');
  });
});
