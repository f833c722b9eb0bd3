import { describe, expect, it } from 'vitest';
import { executorLabel, followUpFor, renderFindings, renderTodo } from '../../src/agent/planning/render.js';
import type { ScratchpadEntry } from '../../src/tools/types.js';

describe('followUpFor', () => {
  it.each([
    ['simple', false, 'Plan ready. Proceed with step 1.'],
    ['medium', false, 'Plan ready. Proceed with step 1.'],
    ['complex', false, 'Plan ready (complex). Present the plan to the user briefly and wait for their confirmation before executing.'],
    ['complex', true, 'Plan is ready. Execute it now.'],
    ['simple', true, 'Plan is ready. Execute it now.'],
  ] as const)('%s, sub-agent %s', (complexity, isSubagent, expected) => {
    expect(followUpFor(complexity, isSubagent)).toBe(expected);
  });
});

describe('re-plan packing', () => {
  it('cuts each finding to a gist and keeps the most recent within the total', () => {
    const entries: ScratchpadEntry[] = Array.from({ length: 12 }, (_, i) => ({ key: `k${i}`, kind: i % 2 ? 'error' : 'finding', value: `${i} ${'v'.repeat(1000)}` }));
    const text = renderFindings(entries);
    expect(text.length).toBeLessThanOrEqual(4000);
    expect(text).toContain('- [error] k11: 11 ');
    expect(text).not.toContain('k0:');
    expect(text.split('\n')[0]?.length).toBeLessThan(640);
  });

  it('renders statuses and empty lists', () => {
    expect(renderTodo([{ id: 1, text: 'a', status: 'done' }])).toBe('1. [done] a');
    expect(renderTodo([])).toBe('(empty)');
    expect(renderFindings([{ key: 'n', kind: 'note', value: 'private' }])).toBe('(none)');
  });
});

describe('executorLabel', () => {
  it('labels each executor kind', () => {
    expect([executorLabel({ kind: 'tool', name: 'shell' }), executorLabel({ kind: 'agent', profile: 'coder' }), executorLabel({ kind: 'self' })]).toEqual([
      '[TOOL: shell]',
      '[AGENT: coder]',
      '[SELF]',
    ]);
  });
});
