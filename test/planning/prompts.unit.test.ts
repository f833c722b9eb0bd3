import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PlanningError } from '../../src/agent/planning/planning-error.js';
import { fillTemplate, loadPlanningPrompt, planningPromptDir, type PlanningPromptName } from '../../src/agent/planning/prompts.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

describe('fillTemplate', () => {
  it.each([
    ['one placeholder', 'a {{x}} b', { x: '1' }, 'a 1 b'],
    ['repeated placeholders', '{{x}}{{x}}', { x: 'ab' }, 'abab'],
    ['spaces inside braces', '{{ x }}', { x: 'y' }, 'y'],
    ['empty value', 'a{{x}}b', { x: '' }, 'ab'],
    ['a value holding braces is not expanded again', '{{x}}', { x: '{{y}}' }, '{{y}}'],
    ['a value holding $& is inserted verbatim', '{{x}}', { x: '$&$1' }, '$&$1'],
    ['extra vars are ignored', 'plain', { x: 'y' }, 'plain'],
  ])('%s', (_name, template, vars, expected) => {
    expect(fillTemplate(template, vars)).toBe(expected);
  });

  it('throws on a placeholder without a value (a prompt-file typo)', () => {
    expect(() => fillTemplate('{{missing}}', {})).toThrow('{{missing}}');
    expect(() => fillTemplate('{{toString}}', {})).toThrow('{{toString}}');
  });
});

describe('planningPromptDir', () => {
  it.each([
    ['src layout', 'file:///opt/navi/src/agent/planning/prompts.ts'],
    ['dist layout', 'file:///opt/navi/dist/agent/planning/prompts.js'],
  ])('reaches <root>/prompts/planning/ from the %s', (_name, moduleUrl) => {
    expect(planningPromptDir(moduleUrl).href).toBe('file:///opt/navi/prompts/planning/');
  });

  it('defaults to this repository', () => {
    expect(fileURLToPath(planningPromptDir())).toBe(join(repoRoot, 'prompts/planning/'));
  });
});

describe('loadPlanningPrompt', () => {
  it('loads the same file for modules in src/ and in dist/', async () => {
    const root = mkdtempSync(join(tmpdir(), 'navi-prompts-'));
    mkdirSync(join(root, 'prompts/planning'), { recursive: true });
    writeFileSync(join(root, 'prompts/planning/repair.md'), 'fix: {{problems}}');
    for (const layout of ['src/agent/planning/prompts.ts', 'dist/agent/planning/prompts.js']) {
      const dir = planningPromptDir(pathToFileURL(join(root, layout)));
      await expect(loadPlanningPrompt('repair', dir)).resolves.toBe('fix: {{problems}}');
    }
  });

  it('names the missing file in a PlanningError', async () => {
    const dir = planningPromptDir(pathToFileURL(join(tmpdir(), 'nowhere-navi/dist/agent/planning/x.js')));
    const err = await loadPlanningPrompt('analysis', dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlanningError);
    expect((err as Error).message).toContain(join(tmpdir(), 'nowhere-navi/prompts/planning/analysis.md'));
  });

  const vars: Record<PlanningPromptName, Record<string, string>> = {
    analysis: { direct_option: '' },
    'direct-option': {},
    execution: {},
    'execution-input': { analysis: 'a', complexity: 'simple', depth: '1-3', tools: 't', profiles: 'p', done: 'none' },
    replan: { reason: 'r', updated_goal: 'g', todo: 't', findings: 'f' },
    repair: { problems: 'p' },
  };

  it.each(Object.entries(vars))('the shipped %s prompt fills with exactly its variables and stays small', async (name, values) => {
    const text = await loadPlanningPrompt(name as PlanningPromptName);
    expect(fillTemplate(text, values)).not.toMatch(/\{\{/);
    // Local models prefill every byte of every planner call.
    expect(Buffer.byteLength(text)).toBeLessThan(1200);
  });

  it('the analysis prompt asks for every section and offers DIRECT only through its placeholder', async () => {
    const text = await loadPlanningPrompt('analysis');
    for (const section of ['TASK:', 'GOAL:', 'UNKNOWNS:', 'RESOURCES:', 'KNOWLEDGE RULES:', 'COMPLEXITY: simple|medium|complex', 'SUBTASKS:', 'COMMITMENTS:']) {
      expect(text).toContain(section);
    }
    expect(text).not.toContain('DIRECT');
    expect(await loadPlanningPrompt('direct-option')).toContain('DIRECT');
  });

  it('the execution prompt states the markers, the depths, the cap and the comma test', async () => {
    const text = await loadPlanningPrompt('execution');
    for (const phrase of ['TOOL: <tool_name>', 'AGENT: <profile_id>', 'SELF', 'simple 1-3, medium 5-9, complex 8-20', 'Never more than 20', 'Comma test']) {
      expect(text).toContain(phrase);
    }
  });
});
