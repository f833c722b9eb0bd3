import { describe, expect, it } from 'vitest';
import { diversifyInstruction, nextDiversification, type DiversifyContext } from '../../src/loop/diversify.js';
import { DIVERSIFY_STRATEGIES } from '../../src/config/schema.js';

const context: DiversifyContext = {
  task: 'Make `npm test` pass.\nDo not edit tests.',
  phase: 'IMPL',
  unmet: ['tests_passing', 'code_committed'],
  stagnation: { stagnant: true, reason: 'same_state', count: 3 },
  attempt: 1,
};

describe('nextDiversification (the third one aborts)', () => {
  it.each([
    [0, { action: 'diversify', attempt: 1 }],
    [1, { action: 'diversify', attempt: 2 }],
  ])('after %d → %j', (previous, expected) => {
    expect(nextDiversification(previous)).toEqual(expected);
  });

  it.each([2, 3])('after %d → abort', (previous) => {
    const d = nextDiversification(previous);
    expect(d.action).toBe('abort');
    expect(d.action === 'abort' && d.reason).toMatch(/stagnation persisted after \d diversifications/);
  });

  it('allows two, then aborts saying so', () => {
    let previous = 0;
    while (previous < 10 && nextDiversification(previous).action === 'diversify') previous++;
    expect(previous).toBe(2);
    expect(nextDiversification(previous)).toMatchObject({ action: 'abort', reason: expect.stringContaining('after 2 diversifications') as string });
  });
});

describe('diversifyInstruction', () => {
  it.each(DIVERSIFY_STRATEGIES)('%s: filled in from the template file, nothing left unfilled', (strategy) => {
    const text = diversifyInstruction(strategy, context);
    expect(text).toContain(`strategy: ${strategy}, recovery 1 of 2`);
    expect(text).toContain('Task: Make `npm test` pass.');
    expect(text).not.toContain('Do not edit tests.');
    expect(text).toContain('Phase: IMPL. Completion indicators not met yet: tests passing, code changes committed.');
    expect(text).toContain('Your last 3 iterations ended in the same state.');
    expect(text).not.toMatch(/\{\{|\}\}/);
  });

  it('each strategy asks for something different', () => {
    expect(diversifyInstruction('combine', context)).toMatch(/Combine the parts that worked/);
    expect(diversifyInstruction('radical', context)).toMatch(/substantially different approach/);
    expect(diversifyInstruction('reread', context)).toMatch(/Re-read the task statement/);
  });

  it('describes oscillation', () => {
    const text = diversifyInstruction('combine', { ...context, stagnation: { stagnant: true, reason: 'oscillation', count: 6, period: 3 }, unmet: [] });
    expect(text).toContain('Your last 6 iterations cycled between the same 3 states.');
    expect(text).toContain('not met yet: none.');
  });
});
