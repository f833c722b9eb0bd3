import { describe, expect, it } from 'vitest';
import type { IndicatorState } from '../../src/loop/indicators.js';
import {
  exitSignalLine,
  renderDiversify,
  renderLoopBanner,
  renderLoopComplete,
  renderMaxIterations,
  renderStagnation,
  renderStatusBlock,
  statusFields,
  taskLine,
} from '../../src/loop/status-block.js';

const R = '━'.repeat(52);

const state: IndicatorState = {
  values: {
    code_committed: true,
    tests_passing: true,
    code_simplified: false,
    docs_updated: false,
    ticket_closed: 'skipped',
    marker_created: false,
  },
  skipped: { ticket_closed: 'no ticket' },
};

describe('renderStatusBlock', () => {
  it('renders seed 004 layout exactly', () => {
    const text = renderStatusBlock({
      phase: 'VERIFY',
      iteration: 3,
      maxIterations: 8,
      indicators: state,
      exitSignal: false,
      stateHash: 'a0524c',
      previousHash: '9ea082',
      stagnationCount: 1,
      stagnationThreshold: 3,
      nextAction: 'Emit the exit signal if the task is complete',
    });
    expect(text).toBe(
      [
        R,
        'NAVIGATOR_STATUS',
        R,
        'Phase: VERIFY',
        'Iteration: 3/8',
        'Progress: 85%',
        '',
        'Completion Indicators:',
        '  [x] Code changes committed',
        '  [x] Tests passing',
        '  [ ] Code simplified',
        '  [ ] Documentation updated',
        '  [ ] Ticket closed (skipped - no ticket)',
        '  [ ] Marker created',
        '',
        'Exit Conditions:',
        '  Heuristics: 2/5 (need 2+)',
        '  EXIT_SIGNAL: false',
        '',
        'State Hash: a0524c',
        'Previous Hash: 9ea082',
        'Stagnation: 1/3',
        '',
        'Next Action: Emit the exit signal if the task is complete',
        R,
      ].join('\n'),
    );
  });

  it('shows the first iteration and an unknown commit state outside git', () => {
    const text = renderStatusBlock({
      phase: 'INIT',
      iteration: 1,
      maxIterations: 5,
      indicators: {
        values: { ...state.values, code_committed: 'skipped', tests_passing: false },
        skipped: { code_committed: 'unknown: not a git repository', ticket_closed: 'no ticket' },
      },
      exitSignal: true,
      stateHash: '9ea082',
      previousHash: null,
      stagnationCount: 1,
      stagnationThreshold: 3,
      nextAction: 'Load context and understand requirements',
    });
    const lines = text.split('\n');
    expect(lines).toContain('  [ ] Code changes committed (skipped - unknown: not a git repository)');
    // Four indicators apply: the gate needs one (requiredHeuristics).
    expect(lines).toContain('  Heuristics: 0/4 (need 1+)');
    expect(lines).toContain('  EXIT_SIGNAL: true');
    expect(lines).toContain('Previous Hash: none');
    expect(lines).toContain('Progress: 10%');
  });

  it('exposes the same fields as data for the iteration_status event', () => {
    const f = statusFields({
      phase: 'IMPL',
      iteration: 2,
      maxIterations: 5,
      indicators: state,
      exitSignal: false,
      stateHash: 'abcdef',
      previousHash: null,
      stagnationCount: 1,
      stagnationThreshold: 3,
      nextAction: 'x',
    });
    expect(f).toMatchObject({ progress: 60, heuristics_met: 2, heuristics_total: 5, previous_hash: null, exit_signal: false });
  });
});

describe('the other blocks', () => {
  it('renderLoopBanner', () => {
    expect(renderLoopBanner({ task: 'Fix the tests\nmore detail', maxIterations: 8, stagnationThreshold: 3 })).toBe(
      [R, 'LOOP MODE ACTIVATED', R, '', 'Task: Fix the tests', 'Max iterations: 8', 'Stagnation threshold: 3', '', 'Starting iteration 1...', R].join('\n'),
    );
    expect(renderLoopBanner({ task: 't', maxIterations: 8, stagnationThreshold: 3, startIteration: 4 })).toContain('Starting iteration 4...');
  });

  it('renderLoopComplete', () => {
    const all: IndicatorState = {
      values: { code_committed: true, tests_passing: true, code_simplified: true, docs_updated: true, ticket_closed: 'skipped', marker_created: true },
      skipped: { ticket_closed: 'no ticket' },
    };
    expect(
      renderLoopComplete({
        task: 'fix-tests',
        iterations: 3,
        maxIterations: 8,
        phase: 'COMPLETE',
        indicators: all,
        exitSignal: true,
        requireExplicitSignal: true,
        summary: ['Fixed off-by-one in src/sum.ts', 'Committed 1f2e3d4'],
      }),
    ).toBe(
      [
        R,
        'LOOP COMPLETE',
        R,
        '',
        'Task: fix-tests',
        'Iterations: 3/8',
        'Final Phase: COMPLETE',
        '',
        'Completion Indicators:',
        '  [x] Code changes committed',
        '  [x] Tests passing',
        '  [x] Code simplified',
        '  [x] Documentation updated',
        '  [ ] Ticket closed (skipped - no ticket)',
        '  [x] Marker created',
        '',
        'Exit Conditions:',
        '  Heuristics: 5/5 (passed)',
        '  EXIT_SIGNAL: true (passed)',
        '',
        'Summary:',
        '- Fixed off-by-one in src/sum.ts',
        '- Committed 1f2e3d4',
        '',
        R,
      ].join('\n'),
    );
  });

  it('renderLoopComplete without an explicit signal requirement', () => {
    const text = renderLoopComplete({
      task: 't', iterations: 1, maxIterations: 5, phase: 'VERIFY', indicators: state, exitSignal: false, requireExplicitSignal: false, summary: [],
    });
    expect(text).toContain('  EXIT_SIGNAL: false (not required)\n');
    expect(text).toContain('Final Phase: VERIFY\n');
    expect(text).toContain('Summary:\n- (no summary)\n');
  });

  it('renderStagnation (same state)', () => {
    expect(
      renderStagnation({ stagnation: { stagnant: true, reason: 'same_state', count: 3 }, phase: 'IMPL', indicators: state, lastAction: 'edit_file src/a.ts' }),
    ).toBe(
      [
        R,
        'STAGNATION DETECTED',
        R,
        '',
        'Same state detected for 3 consecutive iterations.',
        '',
        'Current State:',
        '  Phase: IMPL',
        '  Indicators: 2/5',
        '  Last Action: edit_file src/a.ts',
        '',
        'Possible causes:',
        '1. Blocked by external dependency',
        '2. Unclear requirements',
        '3. Test failures preventing progress',
        '4. Missing context or permissions',
        '',
        'Options:',
        '1. [Continue] - Try one more iteration',
        "2. [Clarify] - Explain what's blocking",
        '3. [Abort] - End loop, manual intervention',
        '',
        R,
      ].join('\n'),
    );
  });

  it('renderStagnation (oscillation)', () => {
    const text = renderStagnation({ stagnation: { stagnant: true, reason: 'oscillation', count: 4, period: 2 }, phase: 'IMPL', indicators: state, lastAction: 'x' });
    expect(text.split('\n')[4]).toBe('Oscillating between 2 states for 4 iterations.');
  });

  it('renderDiversify', () => {
    expect(renderDiversify({ strategy: 'radical', stagnation: { stagnant: true, reason: 'same_state', count: 3 } })).toBe(
      [R, 'STAGNATION → AUTO-DIVERSIFY (radical)', R, '', 'Same state for 3 iterations. Auto-recovery: radical', 'Stagnation counter reset.', R].join('\n'),
    );
  });

  it('renderMaxIterations', () => {
    expect(renderMaxIterations({ maxIterations: 5, phase: 'IMPL', indicators: state, exitSignal: false, progressMade: ['Fixed 2 of 3 failing tests'] })).toBe(
      [
        R,
        'MAX ITERATIONS REACHED',
        R,
        '',
        'Completed 5 iterations without full completion.',
        '',
        'Current State:',
        '  Phase: IMPL',
        '  Indicators: 2/5',
        '  EXIT_SIGNAL: false',
        '',
        'Progress made:',
        '- Fixed 2 of 3 failing tests',
        '',
        'Options:',
        '1. [Extend] - Add 3 more iterations',
        '2. [Complete] - Accept current state as done',
        '3. [Abort] - Exit without completion',
        '',
        R,
      ].join('\n'),
    );
  });

  it('exitSignalLine', () => {
    expect(exitSignalLine('All criteria met')).toBe('{"v":2,"type":"exit","success":true,"reason":"All criteria met"}');
    expect(exitSignalLine('say "hi"')).toBe('{"v":2,"type":"exit","success":true,"reason":"say \\"hi\\""}');
  });

  it('taskLine keeps the first non-empty line and cuts long prompts', () => {
    expect(taskLine('\n\n  first  \nsecond')).toBe('first');
    expect(taskLine('x'.repeat(150))).toBe(`${'x'.repeat(99)}…`);
  });
});
