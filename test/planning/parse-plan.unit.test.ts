import { describe, expect, it } from 'vitest';
import { parseExecutionPlan, type PlanParse } from '../../src/agent/planning/parse.js';
import type { Executor } from '../../src/agent/planning/types.js';

const options = {
  knownTools: ['read_file', 'write_file', 'edit_file', 'list_dir', 'search_files', 'shell', 'todo', 'spawn_agent'],
  knownProfiles: ['researcher', 'coder'],
};

const tool = (name: string): Executor => ({ kind: 'tool', name });
const agent = (profile: string): Executor => ({ kind: 'agent', profile });
const self: Executor = { kind: 'self' };

function ok(result: PlanParse) {
  if ('problems' in result) throw new Error(`unexpected problems: ${result.problems.join('; ')}`);
  return result;
}

interface Case {
  name: string;
  text: string;
  milestones?: string[];
  steps: [string, Executor][];
  notes?: RegExp[];
}

const cases: Case[] = [
  {
    name: 'the requested format',
    text: 'MILESTONES:\n- Bug located\n- Fix verified\nSTEPS:\n1. Read src/app.ts TOOL: read_file\n2. Fix the null check in parse() TOOL: edit_file\n3. Run npm test TOOL: shell\n4. Report the change SELF',
    milestones: ['Bug located', 'Fix verified'],
    steps: [
      ['Read src/app.ts', tool('read_file')],
      ['Fix the null check in parse()', tool('edit_file')],
      ['Run npm test', tool('shell')],
      ['Report the change', self],
    ],
  },
  {
    name: 'markdown headings, bold, brackets, dashes and parentheses',
    text: [
      '## Milestones',
      '* **Config understood**',
      '* **Migration written**',
      '',
      '## Execution Plan',
      '**1.** Read `drizzle.config.ts` [TOOL: read_file]',
      '**2.** Survey existing migrations — TOOL: list_dir',
      '**3.** Research the drizzle-kit flags (AGENT: researcher)',
      '**4.** Write the migration - TOOL: write_file',
      '**5.** Summarise → SELF',
    ].join('\n'),
    milestones: ['Config understood', 'Migration written'],
    steps: [
      ['Read `drizzle.config.ts`', tool('read_file')],
      ['Survey existing migrations', tool('list_dir')],
      ['Research the drizzle-kit flags', agent('researcher')],
      ['Write the migration', tool('write_file')],
      ['Summarise', self],
    ],
  },
  {
    name: '"Step N:" lines, lowercase markers, markers on the next line',
    text: 'Step 1: Find the handler\n   tool: search_files\nStep 2 — Edit it\n   Executor: TOOL: edit_file\n### Step 3: Verify\n   (self)',
    steps: [
      ['Find the handler', tool('search_files')],
      ['Edit it', tool('edit_file')],
      ['Verify', self],
    ],
  },
  {
    name: 'numbered with ) and a <think> block and a code fence',
    text: '<think>The user wants a fix. Plan: 1. do it</think>\n```markdown\nSTEPS\n1) Read the log TOOL: `read_file`\n2) Explain the error SELF\n```',
    steps: [
      ['Read the log', tool('read_file')],
      ['Explain the error', self],
    ],
  },
  {
    name: 'numbered milestones then numbered steps without a STEPS header',
    text: 'MILESTONES:\n1. Repo understood\n2. Feature done\n\n1. List the src folder TOOL: list_dir\n2. Write the feature TOOL: write_file',
    milestones: ['Repo understood', 'Feature done'],
    steps: [
      ['List the src folder', tool('list_dir')],
      ['Write the feature', tool('write_file')],
    ],
  },
  {
    name: 'bulleted milestones then numbered steps without markers',
    text: 'Milestones:\n- One\n\n1. Think about it\n2. Answer',
    milestones: ['One'],
    steps: [
      ['Think about it', self],
      ['Answer', self],
    ],
    notes: [/step 1: no executor marker; treated as SELF/, /step 2: no executor marker/],
  },
  {
    name: 'inline milestones and a marker in mid-sentence',
    text: 'Milestones: data loaded; report written\n1. Use TOOL: read_file to load data.csv\n2. TOOL: write_file — write report.md',
    milestones: ['data loaded', 'report written'],
    steps: [
      ['Use read_file to load data.csv', tool('read_file')],
      ['write report.md', tool('write_file')],
    ],
  },
  {
    name: 'prose before and after the plan is ignored',
    text: "Sure! Here's the plan.\n\n1. Run the tests TOOL: shell\n2. Fix failures AGENT: coder\n\nThis plan keeps changes small and verifiable.",
    steps: [
      ['Run the tests', tool('shell')],
      ['Fix failures', agent('coder')],
    ],
  },
  {
    name: 'an echoed analysis with numbered subtasks does not leak steps',
    text: 'GOAL: ship it\nSUBTASKS:\n1. a\n2. b\nSTEPS:\n1. Build TOOL: shell\n2. Check output SELF',
    steps: [
      ['Build', tool('shell')],
      ['Check output', self],
    ],
  },
  {
    name: 'names corrected up to case, dashes and a functions. prefix',
    text: '1. Read it TOOL: Read_File\n2. Search TOOL: search-files\n3. Write TOOL: functions.write_file()\n4. Delegate AGENT: Researcher',
    steps: [
      ['Read it', tool('read_file')],
      ['Search', tool('search_files')],
      ['Write', tool('write_file')],
      ['Delegate', agent('researcher')],
    ],
    notes: [/TOOL Read_File read as read_file/],
  },
  {
    name: 'unknown tools and profiles run as SELF with a note',
    text: '1. Grep the repo TOOL: grep\n2. Ask the reviewer AGENT: reviewer\n3. Browse TOOL:',
    steps: [
      ['Grep the repo', self],
      ['Ask the reviewer', self],
      ['Browse', self],
    ],
    notes: [/step 1: unknown tool grep; treated as SELF/, /step 2: unknown profile reviewer/, /step 3: TOOL without a name/],
  },
  {
    name: 'a TOOL naming a profile becomes an AGENT step',
    text: '1. Investigate flaky tests TOOL: researcher',
    steps: [['Investigate flaky tests', agent('researcher')]],
    notes: [/names a profile/],
  },
  {
    name: 'several markers keep the last, with a note',
    text: '1. Read and edit config TOOL: read_file TOOL: edit_file',
    steps: [['Read and edit config TOOL: read_file', tool('edit_file')]],
    notes: [/2 executor markers; kept the last/],
  },
  {
    name: 'model numbering is replaced by 1..N',
    text: '1. a SELF\n3. b SELF\n3. c SELF',
    steps: [
      ['a', self],
      ['b', self],
      ['c', self],
    ],
    notes: [/renumbered/],
  },
  {
    name: 'wrapped step text and indented sub-bullets join the step',
    text: '1. Update the README section on\n   configuration TOOL: edit_file\n2. Run checks\n   - lint TOOL: shell',
    steps: [
      ['Update the README section on; configuration', tool('edit_file')],
      ['Run checks; lint', tool('shell')],
    ],
  },
  {
    name: 'bulleted numbered steps with backticked paths keep their quotes',
    text: '- 1. Read `a.ts` `TOOL: read_file`\n- 2. Edit `b.ts` (TOOL: edit_file)',
    steps: [
      ['Read `a.ts`', tool('read_file')],
      ['Edit `b.ts`', tool('edit_file')],
    ],
  },
  {
    name: 'a bracketed known name without a marker; other parentheses stay text',
    text: '1. Read config.json (read_file)\n2. Dig into the failures [researcher]\n3. Explain the result (briefly)',
    steps: [
      ['Read config.json', tool('read_file')],
      ['Dig into the failures', agent('researcher')],
      ['Explain the result (briefly)', self],
    ],
    notes: [/step 3: no executor marker/],
  },
  {
    name: 'a bold executor field after the action',
    text: '1. **Read config** — *Executor:* TOOL: read_file\n2. **Answer** — *Executor:* SELF',
    steps: [
      ['Read config', tool('read_file')],
      ['Answer', self],
    ],
  },
  {
    name: 'a markdown table',
    text: '| # | Step | Executor |\n|---|------|----------|\n| 1 | Read package.json | TOOL: read_file |\n| 2 | Bump the version | TOOL: edit_file |\n| 3 | Summarise | SELF |',
    steps: [
      ['Read package.json', tool('read_file')],
      ['Bump the version', tool('edit_file')],
      ['Summarise', self],
    ],
  },
  {
    name: 'steps grouped under "Milestone N:" headings',
    text: '### Milestone 1: Code located\n1. Search for the route TOOL: search_files\n2. Read it TOOL: read_file\n### Milestone 2: Fixed\n1. Patch the route TOOL: edit_file\n2. Run tests TOOL: shell',
    milestones: ['Code located', 'Fixed'],
    steps: [
      ['Search for the route', tool('search_files')],
      ['Read it', tool('read_file')],
      ['Patch the route', tool('edit_file')],
      ['Run tests', tool('shell')],
    ],
  },
  {
    name: 'a marker before the step text, blank lines between steps',
    text: 'STEPS:\n\nStep 1 (TOOL: read_file): Read config.json\n\nStep 2: Decide the new value\n\n    SELF\n',
    steps: [
      ['Read config.json', tool('read_file')],
      ['Decide the new value', self],
    ],
  },
  {
    name: 'indented nested numbering stays inside its step',
    text: '1. Set up the project\n   1. install deps\n   2. build\n   TOOL: shell\n2. Report SELF',
    steps: [
      ['Set up the project; install deps; build', tool('shell')],
      ['Report', self],
    ],
  },
];

describe('parseExecutionPlan', () => {
  it.each(cases)('$name', ({ text, milestones, steps, notes }) => {
    const plan = ok(parseExecutionPlan(text, options));
    expect(plan.steps.map((s) => [s.text, s.executor])).toEqual(steps);
    expect(plan.steps.map((s) => s.n)).toEqual(steps.map((_, i) => i + 1));
    if (milestones) expect(plan.milestones).toEqual(milestones);
    for (const note of notes ?? []) expect(plan.notes.some((n) => note.test(n)), `${note} in ${plan.notes.join(' | ')}`).toBe(true);
  });

  it.each([
    ['empty output', ''],
    ['prose only', 'I think we should read the file and then fix it.'],
    ['milestones only', 'MILESTONES:\n- a\n- b'],
    ['an analysis instead of a plan', 'TASK: x\nGOAL: y\nCOMPLEXITY: medium'],
  ])('reports no steps for %s', (_name, text) => {
    const result = parseExecutionPlan(text, options);
    expect(result).toEqual({ problems: [expect.stringMatching(/no numbered steps/)] });
  });

  it('reports a step that is only a marker', () => {
    const result = parseExecutionPlan('1. Read x TOOL: read_file\n2. TOOL: shell', options);
    expect('problems' in result && result.problems).toEqual(['step 2 has no description']);
  });

  it('reports more than 20 steps and keeps the full plan for truncation', () => {
    const text = Array.from({ length: 23 }, (_, i) => `${i + 1}. Step number ${i + 1} SELF`).join('\n');
    const result = parseExecutionPlan(text, options);
    if (!('problems' in result)) throw new Error('expected problems');
    expect(result.problems).toEqual(['23 steps; the maximum is 20: merge or drop steps']);
    expect(result.oversized?.steps).toHaveLength(23);
  });

  it('gives no truncatable plan when other problems come with the length', () => {
    const text = Array.from({ length: 21 }, (_, i) => (i === 4 ? '5. SELF' : `${i + 1}. Do ${i} SELF`)).join('\n');
    const result = parseExecutionPlan(text, options);
    expect('problems' in result && result.problems).toHaveLength(2);
    expect('oversized' in result && result.oversized).toBeFalsy();
  });

  it('accepts exactly 20 steps', () => {
    const text = Array.from({ length: 20 }, (_, i) => `${i + 1}. Do ${i} SELF`).join('\n');
    expect(ok(parseExecutionPlan(text, options)).steps).toHaveLength(20);
  });
});
