/**
 * The ending of a loop shows "Marker created" met once it wrote its marker (issue 11, bug 7):
 * the last iteration's evidence was gathered before the marker existed.
 */
import { describe, expect, it } from 'vitest';
import { noIndicators } from '../../src/loop/indicators.js';
import { endingIndicators, loopCompleteEvent, type EndContext } from '../../src/loop/runner-end.js';

function context(): EndContext {
  const indicators = noIndicators();
  indicators.values.tests_passing = true;
  indicators.values.code_committed = true;
  return {
    runId: 'run_x',
    cwd: '/tmp',
    task: { name: 'fix-add', prompt: 'Fix add()', source: 'task.yaml', loopMode: true, checks: [] },
    iteration: 1,
    maxIterations: 5,
    last: { phase: 'VERIFY', indicators, hash: 'abc123' },
    evidence: null,
    signal: null,
    requireExplicitSignal: false,
    now: new Date('2026-01-02T03:04:05Z'),
  };
}

describe('endingIndicators', () => {
  it('ticks marker_created once a marker was written, leaving the rest', () => {
    const before = context().last!.indicators;
    const after = endingIndicators(before, true);
    expect(after.values).toEqual({ ...before.values, marker_created: true });
    expect(before.values.marker_created).toBe(false);
    expect(endingIndicators(before, false)).toBe(before);
  });
});

describe('loopCompleteEvent', () => {
  it('the LOOP COMPLETE block ticks "Marker created" beside the marker it names', () => {
    const ev = loopCompleteEvent({ status: 'completed', reason: 'gate_passed', message: null, marker: 'complete' }, context(), '.agent/.context-markers/2026-01-02-0304_fix-add.md');
    expect(ev.type).toBe('loop_complete');
    const block = ev.type === 'loop_complete' ? (ev.block ?? '') : '';
    expect(block).toContain('  [x] Marker created');
    expect(block).toContain('- Marker: .agent/.context-markers/2026-01-02-0304_fix-add.md');
  });

  it('without a marker, the box stays empty', () => {
    const ev = loopCompleteEvent({ status: 'completed', reason: 'gate_passed', message: null, marker: null }, context(), null);
    expect(ev.type === 'loop_complete' ? ev.block : '').toContain('  [ ] Marker created');
  });
});
