/**
 * `renderMarkdown`: rendered with a Markdown library (marked, GitHub-flavoured) the way a step
 * summary is shown, then the structure is asserted on the parse — the heading, the outcome
 * table's cells, the iterations table, one collapsed `<details>` per iteration holding its
 * status block — for the shapes of run a CI meets, hostile task names and output included.
 */
import { marked, type Token, type Tokens } from 'marked';
import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../src/report/markdown.js';
import { buildRunReport } from '../../src/report/run-report.js';
import type { LoopIterationRecord, LoopRunRecord } from '../../src/store/loop-run-types.js';
import { storedIteration, storedRun } from './report-fixtures.js';

function tokens(md: string): Token[] {
  return marked.lexer(md, { gfm: true });
}

function tables(md: string): Tokens.Table[] {
  return tokens(md).filter((t): t is Tokens.Table => t.type === 'table');
}

function cellTexts(row: Tokens.TableCell[]): string[] {
  return row.map((c) => c.text);
}

interface Case {
  name: string;
  run: LoopRunRecord;
  iterations: LoopIterationRecord[];
  exitCode?: number;
  heading: RegExp;
  outcome: string[];
  notCompleted: RegExp | null;
}

const CASES: Case[] = [
  {
    name: 'completed in two iterations',
    run: storedRun(),
    iterations: [storedIteration(1, { checks: [{ name: 'tests', exit: 1, out: 'FAIL add' }] }), storedIteration(2, { gateDecision: 'exit', gateReason: 'EXIT: 2/5 heuristics + explicit signal', checks: [{ name: 'tests', exit: 0 }] })],
    heading: /^✅ navi loop: fix-add — completed$/,
    outcome: ['completed (gate\\_passed)', '0', '2 of 5', '12,345 (prompt 12,000, completion 345)', '1 min 05 s'],
    notCompleted: null,
  },
  {
    name: 'incomplete at max iterations',
    run: storedRun({ status: 'incomplete', reason: 'max_iterations', iteration: 1, maxIterations: 1 }),
    iterations: [storedIteration(1, { gateDecision: 'blocked', gateReason: 'BLOCKED: Exit signal but only 1/5 heuristics', checks: [{ name: 'tests', exit: 1, out: 'FAIL ```oops``` ' }] })],
    heading: /^⚠️ navi loop: fix-add — incomplete$/,
    outcome: ['incomplete (max\\_iterations)', '3', '1 of 1', '12,345 (prompt 12,000, completion 345)', '1 min 05 s'],
    notCompleted: /^Not completed: incomplete \(max_iterations\): the exit gate said: BLOCKED: Exit signal but only 1\/5 heuristics$/,
  },
  {
    name: 'failed before the first iteration, exit code 2',
    run: storedRun({ status: 'failed', reason: 'replay_mismatch', iteration: 0, promptTokens: 0, completionTokens: 0 }),
    iterations: [],
    exitCode: 2,
    heading: /^❌ navi loop: fix-add — failed$/,
    outcome: ['failed (replay\\_mismatch)', '2', '0 of 5', '0 (prompt 0, completion 0)', '1 min 05 s'],
    notCompleted: /no iteration was committed/,
  },
  {
    name: 'a task name and reasons that are Markdown and HTML',
    run: storedRun({ taskName: 'fix | the *table* <b>now</b>', status: 'aborted', reason: 'stagnation|oscillation' }),
    iterations: [storedIteration(1, { gateReason: 'a | b *c*', statusBlock: 'block with ``` fences ``` and | pipes\n</details>' })],
    heading: /^❌ navi loop: fix \| the \*table\* <b>now<\/b> — aborted$/,
    outcome: ['aborted (stagnation|oscillation)', '4', '2 of 5', '12,345 (prompt 12,000, completion 345)', '1 min 05 s'],
    notCompleted: /^Not completed: aborted \(stagnation\|oscillation\): the exit gate said: a \| b \*c\*$/,
  },
];

describe('renderMarkdown', () => {
  for (const c of CASES) {
    it(`${c.name}: renders as a heading, an outcome table, the iterations and their collapsed status blocks`, () => {
      const md = renderMarkdown(buildRunReport(c.run, c.iterations, c.exitCode));
      const toks = tokens(md);
      const heading = toks.find((t): t is Tokens.Heading => t.type === 'heading' && t.depth === 2);
      // The heading as a reader sees it: escapes resolved.
      expect(heading?.tokens?.map((t) => ('text' in t ? String(t.text) : '')).join('')).toMatch(c.heading);
      const [outcome, its] = tables(md);
      expect(outcome?.header.map((h) => h.text)).toEqual(['outcome', 'exit code', 'iterations', 'tokens', 'time']);
      expect(outcome?.rows).toHaveLength(1);
      expect(cellTexts(outcome?.rows[0] ?? [])).toEqual(c.outcome);
      const quote = toks.find((t): t is Tokens.Blockquote => t.type === 'blockquote');
      if (c.notCompleted === null) expect(quote).toBeUndefined();
      else expect(quote?.text.replace(/\*\*/g, '').replace(/\\(.)/g, '$1')).toMatch(c.notCompleted);
      if (c.iterations.length === 0) {
        expect(its).toBeUndefined();
        expect(md).not.toContain('<details>');
        return;
      }
      expect(its?.header.map((h) => h.text)).toEqual(['#', 'phase', 'exit gate', 'checks', 'tokens', 'time']);
      expect(its?.rows.map((r) => r[0]?.text)).toEqual(c.iterations.map((i) => String(i.iteration)));
      for (const row of its?.rows ?? []) expect(row).toHaveLength(6);
      // Each status block sits in a code block between a <details> and its </details>.
      const html = marked.parse(md, { gfm: true, async: false });
      expect(html.match(/<details>/g)).toHaveLength(c.iterations.length);
      expect(html.match(/<\/details>/g)?.length).toBeGreaterThanOrEqual(c.iterations.length);
      const codes = toks.filter((t): t is Tokens.Code => t.type === 'code').map((t) => t.text);
      for (const it of c.iterations) expect(codes).toContain(it.statusBlock.replace(/\s+$/, ''));
    });
  }

  it('failing check output is shown under its iteration, fenced longer than any backticks inside', () => {
    const out = 'FAIL ```` not a fence';
    const md = renderMarkdown(buildRunReport(storedRun(), [storedIteration(1, { checks: [{ name: 'tests', exit: 1, out }] })]));
    const codes = tokens(md).filter((t): t is Tokens.Code => t.type === 'code').map((t) => t.text);
    expect(codes).toContain(out);
    expect(md).toContain('`````text');
  });
});
