/**
 * The live page's fold of a loop run's events (src/serve/page/run-model.js): each rule with the
 * events that decide it, in Node (the module touches no DOM). Events carry the real schema-v1
 * fields (src/agent/events.ts).
 */
import { describe, expect, it } from 'vitest';
import { applyRunEvent, applyRunSnapshot, budgets, decisionWord, emptyRun, indicatorMarks, needsFeedback, optionWord, shortCount, shortDuration } from '../../src/serve/page/run-model.js';
import { validateEvent } from '../../src/agent/events.js';

type Ev = Record<string, unknown> & { type: string };

const T0 = '2026-12-03T10:00:00.000Z';
let seq = 0;
function ev(type: string, fields: Record<string, unknown>, loopIteration?: number): Ev {
  const out: Ev = { type, schema_version: 1, seq: seq++, ts: T0, session_id: 's1', run_id: 'run_1', ...fields };
  if (loopIteration !== undefined) out.loop_iteration = loopIteration;
  return out;
}

const INDICATORS = { code_committed: false, tests_passing: true, code_simplified: false, docs_updated: false, ticket_closed: 'skipped', marker_created: false };

function loopStarted(extra: Record<string, unknown> = {}): Ev {
  return ev('loop_started', {
    task_name: 'fix-add', task: 'Fix <b>add</b>', source: 'task.yaml', resumed: false, start_iteration: 1, max_iterations: 5,
    stagnation_threshold: 3, exit_requires_explicit_signal: true, iteration_approval: 'strict', periodic_interval: 3,
    never_pause_on_stagnation: false, stagnation_diversify_strategy: 'combine', decisions: 'headless', checks: ['tests'],
    max_tokens: 10_000, deadline_at: '2026-12-03T11:00:00.000Z', iteration_timeout_s: 1800, git_repo: true, sandbox: 'off', sandbox_network: false, ...extra,
  });
}

function iterationStatus(n: number, phase: string, progress: number): Ev {
  return ev('iteration_status', {
    phase, phase_reason: 'r', max_iterations: 5, progress, indicators: INDICATORS, skipped: { ticket_closed: 'no ticket' }, heuristics_met: 1,
    heuristics_total: 5, exit_signal: false, state_hash: `abc00${n}`, previous_hash: null, stagnation_count: 1, stagnation_threshold: 3,
    next_action: 'run tests', block: `NAVIGATOR_STATUS ${n}`,
    evidence: { git_repo: true, files_read: [], files_changed: [], commits_since_start: 0, uncommitted_tracked_changes: false, tool_calls: 1, test_runs: [], checks: [] },
    iteration: n,
  }, n);
}

function fold(events: Ev[]) {
  const state = emptyRun('run_1');
  for (const e of events) applyRunEvent(state, e);
  return state;
}

describe('run model', () => {
  it('the sample events are schema-v1 events', () => {
    seq = 0;
    const events = [loopStarted(), ev('iteration_started', { max_iterations: 5, tokens_spent: 0, iteration: 1 }, 1), iterationStatus(1, 'RESEARCH', 25)];
    expect(events.flatMap((e) => validateEvent(e))).toEqual([]);
  });

  it('loop_started gives the task, the options and the budgets', () => {
    seq = 0;
    const s = fold([loopStarted()]);
    expect([s.task, s.taskName, s.status]).toEqual(['Fix <b>add</b>', 'fix-add', 'running']);
    expect(s.config).toMatchObject({ maxIterations: 5, approval: 'strict', maxTokens: 10_000, iterationTimeoutS: 1800, checks: ['tests'] });
  });

  it('the current iteration streams thinking, text and tool calls as blocks', () => {
    seq = 0;
    const s = fold([
      loopStarted(),
      ev('iteration_started', { max_iterations: 5, tokens_spent: 0, iteration: 1 }, 1),
      ev('thinking_delta', { text: 'look ' }, 1),
      ev('thinking_delta', { text: 'first' }, 1),
      ev('thinking_end', { chars: 10 }, 1),
      ev('tool_started', { call_id: 'c1', name: 'read_file', arguments: { path: 'm.js' } }, 1),
      ev('text_delta', { text: 'Done ' }, 1),
      ev('tool_call', { call_id: 'c1', name: 'read_file', arguments: { path: 'm.js' }, ok: true, duration_ms: 3, output: 'x', truncated: false }, 1),
      ev('text_delta', { text: 'now.' }, 1),
      ev('text_delta', { text: ' Sub.', is_subagent: true }, 1),
    ]);
    expect(s.current?.blocks.map((b) => [b.kind, b.text ?? b.name, b.ok ?? null])).toEqual([
      ['thinking', 'look first', null],
      ['tool', 'read_file', true],
      ['text', 'Done now.', null],
    ]);
  });

  it('a new iteration starts a fresh stream; the status, gate and decisions land on their iteration', () => {
    seq = 0;
    const s = fold([
      loopStarted(),
      ev('iteration_started', { max_iterations: 5, tokens_spent: 0, iteration: 1 }, 1),
      ev('text_delta', { text: 'one' }, 1),
      iterationStatus(1, 'RESEARCH', 25),
      ev('exit_gate', { decision: 'continue', reason: 'CONTINUE: 0/5', heuristics_met: 0, heuristics_total: 5, heuristics_needed: 2, exit_signal: false, signal: null, iteration: 1 }, 1),
      ev('approval_requested', { prompt: 'approval', question: 'Accept iteration 1 and continue?', options: ['Continue', 'Adjust', 'Abort'], iteration: 1 }, 1),
    ]);
    expect(s.status).toBe('awaiting_decision');
    expect(s.pending).toMatchObject({ prompt: 'approval', options: ['Continue', 'Adjust', 'Abort'], iteration: 1 });
    applyRunEvent(s, ev('approval_decision', { prompt: 'approval', decision: 'continue', choice: 'Continue', source: 'terminal', iteration: 1 }, 1));
    applyRunEvent(s, ev('iteration_started', { max_iterations: 5, tokens_spent: 400, iteration: 2 }, 2));
    expect(s.pending).toBeNull();
    expect(s.current).toMatchObject({ n: 2, blocks: [] });
    expect(s.iterations.map((i) => [i.n, i.status?.phase ?? null, i.gate?.decision ?? null, i.decisions.map((d) => d.choice)])).toEqual([
      [1, 'RESEARCH', 'continue', ['Continue']],
      [2, null, null, []],
    ]);
    expect(s.tokensSpent).toBe(400);
  });

  it('an event seen before (a replay overlapping what was shown) is skipped', () => {
    seq = 0;
    const start = loopStarted();
    const it1 = ev('iteration_started', { max_iterations: 5, tokens_spent: 0, iteration: 1 }, 1);
    const delta = ev('text_delta', { text: 'a' }, 1);
    const s = fold([start, it1, delta, delta, { ...delta, seq: 1 }]);
    expect(s.current?.blocks.map((b) => b.text)).toEqual(['a']);
  });

  it.each([
    ['loop_complete', { status: 'completed', reason: 'exit_gate', iterations: 2, max_iterations: 5, phase: 'COMPLETE', state_hash: 'aaaaaa', indicators: INDICATORS, marker: null, resumable: false }, 'completed'],
    ['result', { status: 'interrupted', reason: 'interrupted', exit_code: 130, result: '', num_turns: 1, usage: { prompt_tokens: 5, completion_tokens: 1 }, duration_ms: 1, errors: [] }, 'interrupted'],
  ])('%s ends the run (status %s) and clears a pending prompt', (type, fields, status) => {
    seq = 0;
    const s = fold([loopStarted(), ev('approval_requested', { prompt: 'approval', question: 'q', options: ['Continue'], iteration: 1 }, 1), ev(type, fields)]);
    expect([s.status, s.pending]).toEqual([status, null]);
  });

  it('stagnation and diversification are kept in order', () => {
    seq = 0;
    const s = fold([
      loopStarted(),
      ev('stagnation_detected', { reason: 'same_state', count: 3, threshold: 3, state_hash: 'abc', hash_history: ['abc', 'abc', 'abc'], action: 'diversify', block: 'STAGNATION DETECTED' }, 3),
      ev('diversified', { strategy: 'combine', attempt: 1, max_attempts: 2, instruction: 'try X', block: 'B' }, 3),
    ]);
    expect(s.stagnation.map((x) => x.count)).toEqual([3]);
    expect(s.diversified.map((x) => x.instruction)).toEqual(['try X']);
  });

  it('a snapshot (GET /runs/{id}) fills the config, committed iterations and a pending prompt; live events win', () => {
    seq = 0;
    const s = emptyRun('run_1');
    applyRunSnapshot(s, {
      id: 'run_1', task_name: 'fix-add', task: 'T', status: 'running', alive: true, owner: 'this server', iteration: 1, max_iterations: 5,
      usage: { prompt_tokens: 100, completion_tokens: 20 }, max_tokens: null, deadline_at: null, started_at: T0,
      config: { loop_mode: { iteration_approval: 'strict', stagnation_threshold: 3 }, iteration_timeout_s: 600 },
      iterations: [{
        iteration: 1, phase: 'RESEARCH', indicators: INDICATORS, state_hash: 'abc', gate_decision: 'continue', gate_reason: 'CONTINUE: 0/5',
        exit_signal: false, status_block: 'B1', status: { phase: 'RESEARCH', progress: '25%', stagnation: '1/3', next_action: 'Start' },
        decision: { decision: 'continue', source: 'server' },
      }],
      pending_decision: { prompt: 'approval', iteration: 1, question: 'Accept?', options: ['Continue', 'Adjust', 'Abort'], words: ['continue', 'adjust', 'abort'] },
    });
    expect([s.task, s.taskName, s.status, s.tokensSpent]).toEqual(['T', 'fix-add', 'awaiting_decision', 120]);
    expect(s.config).toMatchObject({ maxIterations: 5, approval: 'strict', stagnationThreshold: 3, iterationTimeoutS: 600, maxTokens: null });
    expect(s.iterations[0]).toMatchObject({
      n: 1,
      status: { phase: 'RESEARCH', progress: 25, stagnation_count: 1, stagnation_threshold: 3, next_action: 'Start', block: 'B1' },
      gate: { decision: 'continue', reason: 'CONTINUE: 0/5' },
      decisions: [{ decision: 'continue' }],
    });
    expect(s.pending?.question).toBe('Accept?');
    applyRunEvent(s, iterationStatus(1, 'IMPL', 55));
    expect(s.iterations[0]?.status?.phase).toBe('IMPL');
  });

  it.each([
    ['running, its process alive', 'running', true, 'running'],
    ['running, its process gone', 'running', false, 'stale'],
    ['finished', 'completed', null, 'completed'],
  ])('a snapshot of a run %s shows %s', (_name, status, alive, shown) => {
    const s = applyRunSnapshot(emptyRun('r'), { id: 'r', status, alive, iterations: [] });
    expect(s.status).toBe(shown);
  });

  it('serve notices: falling behind asks for a reload; a refused frame is shown', () => {
    const s = emptyRun('r');
    applyRunEvent(s, { type: 'serve_error', error: { code: 'invalid_frame', message: 'no' } });
    applyRunEvent(s, { type: 'serve_fell_behind', message: 'reload' });
    expect([s.fellBehind, s.notices.map((n) => n.message)]).toEqual([true, ['no']]);
  });

  it.each([
    ['Continue', 'continue', false],
    ['Finish', 'continue', false],
    ['Adjust', 'adjust', true],
    ['Clarify', 'adjust', true],
    ['Abort', 'abort', false],
    ['Extend', 'extend', false],
    ['Complete', 'complete', false],
  ])('option %s answers "%s" (feedback asked: %s)', (option, word, feedback) => {
    expect(decisionWord(option)).toBe(word);
    expect(needsFeedback(option)).toBe(feedback);
  });

  it.each([
    ['the server\'s words', { options: ['Finish', 'Adjust', 'Abort'], words: ['continue', 'adjust', 'abort'] }, ['continue', 'adjust', 'abort']],
    ['labels alone', { options: ['Continue', 'Clarify', 'Abort'] }, ['continue', 'adjust', 'abort']],
  ])('the decision each button sends: %s', (_name, pending, words) => {
    expect(pending.options.map((_o, i) => optionWord(pending, i))).toEqual(words);
  });

  it('a run of another navi: committed iterations and run updates come as serve frames', () => {
    const s = applyRunSnapshot(emptyRun('r'), { id: 'r', status: 'running', alive: true, iterations: [] });
    applyRunEvent(s, { type: 'serve_iteration_committed', run_id: 'r', iteration: { iteration: 1, phase: 'IMPL', indicators: INDICATORS, state_hash: 'h', gate_decision: 'exit', gate_reason: 'EXIT', status_block: 'B', status: { progress: '80%' }, decision: null } });
    expect(s.iterations[0]).toMatchObject({ n: 1, status: { phase: 'IMPL', progress: 80 }, gate: { decision: 'exit' } });
    applyRunEvent(s, { type: 'serve_run_updated', run: { id: 'r', status: 'completed', alive: null, usage: { prompt_tokens: 9, completion_tokens: 1 } } });
    expect([s.status, s.tokensSpent]).toEqual(['completed', 10]);
  });

  it.each([
    [0, '0'], [999, '999'], [1234, '1.2k'], [34_567, '35k'], [1_500_000, '1.5M'], [Number.NaN, '–'],
  ])('shortCount(%s) = %s', (n, text) => expect(shortCount(n)).toBe(text));

  it.each([
    [400, '0 s'], [45_000, '45 s'], [12 * 60_000, '12 min'], [2 * 3_600_000, '2 h'], [(3 * 60 + 5) * 60_000, '3 h 5 min'],
  ])('shortDuration(%s) = %s', (ms, text) => expect(shortDuration(ms)).toBe(text));

  it('budgets: tokens against the limit, time left to the deadline, the iteration against its timeout', () => {
    seq = 0;
    const s = fold([loopStarted(), ev('iteration_started', { max_iterations: 5, tokens_spent: 2500, iteration: 1 }, 1)]);
    const now = Date.parse(T0) + 15 * 60_000;
    expect(budgets(s, now)).toEqual([
      { key: 'tokens', label: 'Tokens', value: '2.5k of 10k', fraction: 0.25 },
      { key: 'deadline', label: 'Time', value: '45 min left', fraction: 0.25 },
      { key: 'iteration', label: 'Iteration 1', value: '15 min of 30 min', fraction: 0.5 },
    ]);
  });

  it('budgets without limits say so', () => {
    seq = 0;
    const s = fold([loopStarted({ max_tokens: null, deadline_at: null })]);
    expect(budgets(s, Date.parse(T0) + 90_000).map((b) => [b.value, b.fraction])).toEqual([
      ['0 (no limit)', null],
      ['1 min so far (no deadline)', null],
    ]);
  });

  it('indicator marks keep the status block order', () => {
    expect(indicatorMarks(INDICATORS).map((i) => `${i.key}:${i.mark}`)).toEqual([
      'code_committed:not met', 'tests_passing:met', 'code_simplified:not met', 'docs_updated:not met', 'ticket_closed:skipped', 'marker_created:not met',
    ]);
  });
});
