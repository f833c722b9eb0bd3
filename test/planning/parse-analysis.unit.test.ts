import { describe, expect, it } from 'vitest';
import { parseAnalysis, type AnalysisParse } from '../../src/agent/planning/parse.js';

function ok(result: AnalysisParse) {
  if ('problems' in result) throw new Error(`unexpected problems: ${result.problems.join('; ')}`);
  return result;
}

const plain = `TASK: Add a --json flag to the export command
GOAL: navi export --json prints valid JSON and the tests pass
UNKNOWNS:
- where export formats are chosen
RESOURCES:
- src/cli/commands/export.ts
- npm test
KNOWLEDGE RULES:
- keep the text output unchanged
COMPLEXITY: medium
SUBTASKS:
- find the formatter
- add the flag
- add a test
COMMITMENTS:
- none`;

describe('parseAnalysis', () => {
  it('reads every section of the requested format', () => {
    expect(ok(parseAnalysis(plain))).toEqual({
      task: 'Add a --json flag to the export command',
      goal: 'navi export --json prints valid JSON and the tests pass',
      unknowns: ['where export formats are chosen'],
      resources: ['src/cli/commands/export.ts', 'npm test'],
      knowledgeRules: ['keep the text output unchanged'],
      complexity: 'medium',
      subtasks: ['find the formatter', 'add the flag', 'add a test'],
      commitments: [],
      direct: false,
      notes: [],
    });
  });

  it.each([
    ['markdown headings', '## TASK\nFix it\n## GOAL\nGreen tests\n## COMPLEXITY\nsimple', 'Fix it', 'Green tests', 'simple'],
    ['bold labels with the colon inside', '**TASK:** Fix it\n**GOAL:** Green tests\n**COMPLEXITY:** Complex', 'Fix it', 'Green tests', 'complex'],
    ['bold labels with the colon outside', '**Task**: Fix it\n**Goal**: Green tests\n**Complexity**: medium', 'Fix it', 'Green tests', 'medium'],
    ['bulleted bold labels', '- **TASK:** Fix it\n- **GOAL:** Green tests\n- **COMPLEXITY:** simple', 'Fix it', 'Green tests', 'simple'],
    ['numbered capital labels', '1. TASK: Fix it\n2. GOAL: Green tests\n6. COMPLEXITY: medium', 'Fix it', 'Green tests', 'medium'],
    ['mixed case, dash separators', 'Task: Fix it\nGOAL — Green tests\nComplexity: Medium (several files)', 'Fix it', 'Green tests', 'medium'],
    ['a think block and a code fence', '<think>TASK: wrong\nCOMPLEXITY: simple</think>\n```\nTASK: Fix it\nGOAL: Green tests\nCOMPLEXITY: complex\n```', 'Fix it', 'Green tests', 'complex'],
    ['a stray closing think tag', 'reasoning… COMPLEXITY: simple\n</think>\nTASK: Fix it\nGOAL: Green tests\nCOMPLEXITY: complex', 'Fix it', 'Green tests', 'complex'],
    ['synonyms', 'TASK: Fix it\nGOAL: Green tests\nCOMPLEXITY: moderate', 'Fix it', 'Green tests', 'medium'],
    ['autonomous counts as complex', 'TASK: Fix it\nGOAL: Green tests\nCOMPLEXITY: autonomous', 'Fix it', 'Green tests', 'complex'],
    ['exact word beats a synonym', 'TASK: Fix it\nGOAL: Green tests\nCOMPLEXITY: not trivial — medium', 'Fix it', 'Green tests', 'medium'],
    ['multi-line goal', 'TASK: Fix it\nGOAL:\nGreen\ntests\nCOMPLEXITY: simple', 'Fix it', 'Green tests', 'simple'],
    ['complexity in prose only', 'This is a complex-complexity job.\nTASK: Fix it\nGOAL: Green tests', 'Fix it', 'Green tests', 'complex'],
  ])('tolerates %s', (_name, text, task, goal, complexity) => {
    const a = ok(parseAnalysis(text));
    expect([a.task, a.goal, a.complexity]).toEqual([task, goal, complexity]);
  });

  it('continues wrapped list items and drops "none" placeholders', () => {
    const a = ok(parseAnalysis('TASK: x\nUNKNOWNS: none\nSUBTASKS:\n1. read the\n   config file\n2) write\nCOMMITMENTS:\nN/A\nCOMPLEXITY: simple'));
    expect(a.unknowns).toEqual([]);
    expect(a.subtasks).toEqual(['read the config file', 'write']);
    expect(a.commitments).toEqual([]);
  });

  it('keeps list content that merely starts with a section word', () => {
    const a = ok(parseAnalysis('TASK: x\nSUBTASKS:\n- Task: migrate users\n- goal tracking\nCOMPLEXITY: medium'));
    expect(a.task).toBe('x');
    expect(a.subtasks).toEqual(['Task: migrate users', 'goal tracking']);
  });

  it('accepts plural and alternative section names', () => {
    const a = ok(parseAnalysis('Tasks: x\nGoals: y\nOpen questions:\n- q\nResource:\n- r\nRules:\n- k\nSub-tasks:\n- s\nCommitment:\n- c\nCOMPLEXITY: simple'));
    expect([a.unknowns, a.resources, a.knowledgeRules, a.subtasks, a.commitments]).toEqual([['q'], ['r'], ['k'], ['s'], ['c']]);
  });

  it('defaults a missing complexity to medium with a note', () => {
    const a = ok(parseAnalysis('TASK: x\nGOAL: y'));
    expect(a.complexity).toBe('medium');
    expect(a.notes).toEqual(['no COMPLEXITY in the analysis; assumed medium']);
  });

  it.each([
    ['the bare word', 'DIRECT'],
    ['bold with a period', '**DIRECT.**'],
    ['after a think block', '<think>easy</think>\nDIRECT'],
    ['a DIRECT header', 'DIRECT: yes, one read_file call'],
    ['complexity direct', 'TASK: read a file\nCOMPLEXITY: DIRECT'],
    ['a heading', '## DIRECT'],
  ])('recognises DIRECT as %s', (_name, text) => {
    const a = ok(parseAnalysis(text));
    expect(a.direct).toBe(true);
  });

  it.each([
    ['prose using the word', 'TASK: read the file directly\nCOMPLEXITY: simple'],
    ['DIRECT: no', 'TASK: x\nDIRECT: no\nCOMPLEXITY: medium'],
  ])('does not read DIRECT from %s', (_name, text) => {
    expect(ok(parseAnalysis(text)).direct).toBe(false);
  });

  it('a DIRECT answer alone is simple', () => {
    expect(ok(parseAnalysis('DIRECT')).complexity).toBe('simple');
  });

  it.each([
    ['empty output', ''],
    ['prose', 'I will look at the files and fix the bug.'],
    ['only reasoning', '<think>TASK: x</think>'],
  ])('reports a problem for %s', (_name, text) => {
    expect(parseAnalysis(text)).toEqual({ problems: [expect.stringMatching(/no analysis sections/)] });
  });
});
