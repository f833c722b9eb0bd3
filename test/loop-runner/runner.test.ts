/**
 * The loop runner end to end in-process (SPEC §7): scripted models against a real git repo and
 * a real store, one database per backend shared by the file (each test makes its own run).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LineDecisionSource, linesReader } from '../../src/loop/decisions.js';
import type { Store } from '../../src/store/types.js';
import { forEachBackend } from '../support/databases.js';
import {
  call,
  fixAndCommit,
  FIXED,
  git,
  markers,
  ofType,
  readOnly,
  runHarness,
  signalExit,
  workdir,
  type IterationScript,
} from './helpers.js';

forEachBackend((backend) => {
  let store: Store;
  beforeAll(async () => {
    store = await (await backend.fresh()).open();
  });
  afterAll(async () => {
    await store.close();
  });

  describe('loop runner', () => {
    it('a model that fixes the test and commits passes the gate in one iteration, committed with its evidence', async () => {
      const cwd = workdir();
      const h = await runHarness({ store, cwd, script: [fixAndCommit()] });
      expect(h.outcome).toMatchObject({ status: 'completed', reason: 'gate_passed', iterations: 1 });
      expect(h.outcome.indicators).toMatchObject({ code_committed: true, tests_passing: true, ticket_closed: 'skipped' });
      const [status] = ofType(h.events, 'iteration_status');
      expect(status).toMatchObject({ phase: 'IMPL', heuristics_met: 2, heuristics_total: 5, exit_signal: true, iteration: 1, loop_iteration: 1 });
      expect(status?.evidence).toMatchObject({ files_changed: ['math.js'], files_read: ['math.js'], commits_since_start: 1, uncommitted_tracked_changes: false, tool_calls: 3 });
      expect(status?.block).toContain('NAVIGATOR_STATUS');
      expect(ofType(h.events, 'exit_gate')[0]).toMatchObject({ decision: 'exit', signal: { source: 'tool', accepted: true } });
      const done = ofType(h.events, 'loop_complete')[0];
      expect(done).toMatchObject({ status: 'completed', resumable: false });
      expect(done?.exit_line).toBe('{"v":2,"type":"exit","success":true,"reason":"add fixed and committed; the check passes"}');
      expect(done?.block).toContain('LOOP COMPLETE');
      expect(markers(cwd)).toEqual([expect.stringMatching(/^\d{4}-\d\d-\d\d-\d{4}_fix-add\.md$/)]);

      const run = await store.loopRuns.get(h.outcome.runId);
      expect(run).toMatchObject({ status: 'completed', reason: 'gate_passed', iteration: 1, hashHistory: [h.outcome.stateHash] });
      expect(run?.finishedAt).not.toBeNull();
      const rows = await store.loopRuns.listIterations(h.outcome.runId);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ iteration: 1, phase: 'IMPL', gateDecision: 'exit', stateHash: h.outcome.stateHash, statusBlock: status?.block });
      expect(rows[0]?.evidence).toMatchObject({ checks: [{ name: 'tests', exit_code: 0, timed_out: false }], git_repo: true });
      const session = await store.sessions.get(h.outcome.sessionId);
      expect(session?.kind).toBe('loop');
      // The iteration message carries the task and the loop's rules, and loop_signal is offered.
      expect(h.iterationMessages()[0]).toMatch(/^LOOP MODE — iteration 1 of 5\.[\s\S]*Make add\(\) add\./);
      expect(h.llm.requests[0]?.tools?.map((t) => t.function.name)).toContain('loop_signal');
    });

    it('claiming done without any tool call is rejected, and the next iteration is told why', async () => {
      const cwd = workdir();
      const claim: IterationScript = [{ content: 'All done!\n<!-- nav-signal:v3:{"type":"exit","success":true,"reason":"done"} -->' }];
      const h = await runHarness({ store, cwd, script: [claim, fixAndCommit()], loop: { max_iterations: 3 } });
      const gates = ofType(h.events, 'exit_gate');
      expect(gates[0]).toMatchObject({ decision: 'continue', exit_signal: false, signal: { source: 'v3', accepted: false } });
      expect(gates[0]?.signal?.rejected).toMatch(/no tool calls/);
      expect(h.iterationMessages()[1]).toMatch(/Your exit signal was not accepted: the exit signal came from an iteration with no tool calls/);
      expect(h.iterationMessages()[1]).toContain('Status after the previous iteration');
      expect(h.outcome).toMatchObject({ status: 'completed', iterations: 2 });
    });

    it('a signal with too few indicators is BLOCKED and the reason goes to the next iteration', async () => {
      const cwd = workdir();
      const early: IterationScript = [call('read_file', { path: 'math.js' }), signalExit('looks fine'), { content: 'Done.' }];
      const h = await runHarness({ store, cwd, script: [early, fixAndCommit()], loop: { max_iterations: 3 } });
      expect(ofType(h.events, 'exit_gate')[0]).toMatchObject({ decision: 'blocked', reason: 'BLOCKED: Exit signal but only 0/5 heuristics' });
      expect(h.iterationMessages()[1]).toMatch(/Your exit signal was not accepted: only 0\/5 completion indicators are met/);
      expect(h.outcome.status).toBe('completed');
      const rows = await store.loopRuns.listIterations(h.outcome.runId);
      expect(rows.map((r) => r.gateDecision)).toEqual(['blocked', 'exit']);
    });

    it('the same state three times aborts a headless run (exit 4 path) with a loop-aborted marker', async () => {
      const cwd = workdir();
      const h = await runHarness({ store, cwd, script: [readOnly(), readOnly(), readOnly(), readOnly()] });
      expect(h.outcome).toMatchObject({ status: 'aborted', reason: 'stagnation', iterations: 3 });
      expect(h.outcome.message).toMatch(/same state for 3 iterations/);
      const hashes = ofType(h.events, 'iteration_status').map((e) => e.state_hash);
      expect(new Set(hashes).size).toBe(1);
      expect(ofType(h.events, 'iteration_status').map((e) => e.stagnation_count)).toEqual([1, 2, 3]);
      expect(ofType(h.events, 'stagnation_detected')[0]).toMatchObject({ reason: 'same_state', count: 3, action: 'abort' });
      expect(markers(cwd)).toEqual([expect.stringMatching(/_fix-add_loop-aborted\.md$/)]);
      expect((await store.loopRuns.get(h.outcome.runId))?.status).toBe('aborted');
    });

    it('never_pause diversifies twice (counter reset, instruction sent), and the third stagnation aborts', async () => {
      const cwd = workdir();
      const h = await runHarness({
        store,
        cwd,
        script: Array.from({ length: 8 }, () => readOnly()),
        loop: { max_iterations: 10, stagnation_threshold: 2, never_pause_on_stagnation: true, stagnation_diversify_strategy: 'radical' },
      });
      const div = ofType(h.events, 'diversified');
      expect(div.map((d) => d.attempt)).toEqual([1, 2]);
      expect(div.map((d) => d.loop_iteration)).toEqual([2, 4]);
      expect(div[0]?.block).toContain('STAGNATION → AUTO-DIVERSIFY (radical)');
      expect(h.iterationMessages()[2]).toContain('strategy: radical, recovery 1 of 2');
      expect(ofType(h.events, 'iteration_status').map((e) => e.stagnation_count)).toEqual([1, 2, 1, 2, 1, 2]);
      expect(h.outcome).toMatchObject({ status: 'aborted', reason: 'stagnation', iterations: 6 });
      expect(h.outcome.message).toMatch(/after 2 diversifications/);
      expect(markers(cwd)).toEqual([expect.stringMatching(/_loop-aborted\.md$/)]);
      const run = await store.loopRuns.get(h.outcome.runId);
      expect(run).toMatchObject({ diversifications: 2, status: 'aborted' });
    });

    it('oscillating between two states is stagnation too (reason oscillation)', async () => {
      const cwd = workdir();
      const touch = (f: string, c: string): IterationScript => [call('write_file', { path: f, content: c }), { content: 'changed' }];
      const h = await runHarness({ store, cwd, script: [touch('a.txt', '1'), touch('b.txt', '1'), touch('a.txt', '2'), touch('b.txt', '2'), touch('a.txt', '3')], loop: { max_iterations: 6 } });
      const hashes = ofType(h.events, 'iteration_status').map((e) => e.state_hash);
      expect(hashes[0]).toBe(hashes[2]);
      expect(hashes[1]).toBe(hashes[3]);
      expect(hashes[0]).not.toBe(hashes[1]);
      expect(ofType(h.events, 'stagnation_detected')[0]).toMatchObject({ reason: 'oscillation', period: 2, count: 4 });
      expect(h.outcome).toMatchObject({ status: 'aborted', reason: 'oscillation', iterations: 4 });
    });

    it('a question nobody can answer (headless) gets the pick-the-safest-option instruction', async () => {
      const cwd = workdir();
      const ask: IterationScript = [call('read_file', { path: 'math.js' }), { content: 'Should I change add() or the test?' }];
      const h = await runHarness({ store, cwd, script: [ask, fixAndCommit()] });
      expect(h.iterationMessages()[1]).toMatch(/nobody can answer it: this loop runs unattended[\s\S]*safest reasonable option/);
      const rows = await store.loopRuns.listIterations(h.outcome.runId);
      expect(rows[0]?.decision).toMatchObject({ question: { question: 'Should I change add() or the test?', answer: null } });
    });

    it('malformed signals are not exits: prose on the line, bad JSON, a wrong type, success:false, a bad tool call', async () => {
      const cwd = workdir();
      const texts = [
        'I am done nav-signal:v3:{"type":"exit","success":true}',
        'nav-signal:v3:{"type":"exit","success":true',
        '```pilot-signal\n{"type":"finish","success":true}\n```',
        'nav-signal:v3:{"type":"exit","success":false,"reason":"not yet"}',
      ];
      const iterations: IterationScript[] = texts.map((t) => [call('write_file', { path: 'math.js', content: FIXED }), call('shell', { command: 'git commit -qam fix || true' }), { content: t }]);
      iterations.push([call('read_file', { path: 'math.js' }), call('loop_signal', { type: 'exit', success: 'yes', reason: 'x' }), { content: 'ok' }]);
      const h = await runHarness({ store, cwd, script: iterations, loop: { max_iterations: 5, stagnation_threshold: 5 } });
      const gates = ofType(h.events, 'exit_gate');
      expect(gates.map((g) => g.exit_signal)).toEqual([false, false, false, false, false]);
      expect(gates[3]?.signal).toMatchObject({ source: 'v3', accepted: false });
      expect(gates[3]?.signal?.rejected).toMatch(/success: false/);
      expect(ofType(h.events, 'tool_call').find((c) => c.name === 'loop_signal')).toMatchObject({ ok: false });
      expect(h.outcome).toMatchObject({ status: 'incomplete', reason: 'max_iterations', iterations: 5 });
    });

    it('exit_requires_explicit_signal: false exits on two indicators alone', async () => {
      const cwd = workdir();
      const work: IterationScript = fixAndCommit().filter((t) => t.toolCalls?.[0]?.name !== 'loop_signal');
      const h = await runHarness({ store, cwd, script: [work], loop: { exit_requires_explicit_signal: false } });
      expect(ofType(h.events, 'exit_gate')[0]).toMatchObject({ decision: 'exit', exit_signal: false });
      expect(h.outcome.status).toBe('completed');
      expect(ofType(h.events, 'loop_complete')[0]?.block).toContain('EXIT_SIGNAL: false (not required)');
    });

    it('outside git: commit evidence is unknown (skipped, excluded from totals) and the run still completes', async () => {
      const cwd = workdir({ repo: false });
      const work: IterationScript = [call('write_file', { path: 'math.js', content: FIXED }), call('write_file', { path: 'NOTES.md', content: 'fixed add\n' }), signalExit(), { content: 'ok' }];
      const h = await runHarness({ store, cwd, script: [work] });
      const status = ofType(h.events, 'iteration_status')[0];
      expect(status?.indicators.code_committed).toBe('skipped');
      expect(status?.heuristics_total).toBe(4);
      expect(status?.block).toContain('[ ] Code changes committed (skipped - unknown: not a git repository)');
      expect(status?.indicators).toMatchObject({ tests_passing: true, docs_updated: true });
      expect(h.outcome.status).toBe('completed');
      const rows = await store.loopRuns.listIterations(h.outcome.runId);
      expect(rows[0]?.evidence).toMatchObject({ git_repo: false, unknown: [expect.stringMatching(/not a git repository/)] });
    });

    it('strict approval: Adjust feeds back and does not record the hash; Abort ends with user_aborted and a partial marker', async () => {
      const cwd = workdir();
      const decisions = new LineDecisionSource(linesReader(['{"decision":"continue"}', '{"decision":"adjust","feedback":"try harder"}', '{"decision":"abort"}']), 'decisions.jsonl');
      const h = await runHarness({ store, cwd, script: [readOnly(), readOnly(), readOnly()], loop: { iteration_approval: 'strict' }, decisions });
      expect(ofType(h.events, 'approval_decision').map((d) => [d.decision, d.choice, d.source, d.line])).toEqual([
        ['continue', 'Continue', 'decisions_file', 1],
        ['adjust', 'Adjust', 'decisions_file', 2],
        ['abort', 'Abort', 'decisions_file', 3],
      ]);
      expect(h.iterationMessages()[2]).toContain('Feedback from the user on iteration 2 (act on it in this iteration): try harder');
      // Iteration 2's hash was not recorded, so iteration 3 counts 2 in a row, not 3.
      expect(ofType(h.events, 'iteration_status').map((e) => e.stagnation_count)).toEqual([1, 2, 2]);
      expect(h.outcome).toMatchObject({ status: 'aborted', reason: 'user_aborted', iterations: 3 });
      expect(markers(cwd)).toEqual([expect.stringMatching(/_loop-partial\.md$/)]);
      const rows = await store.loopRuns.listIterations(h.outcome.runId);
      expect(rows.map((r) => (r.decision as { approval?: { decision: string } }).approval?.decision)).toEqual(['continue', 'adjust', 'abort']);
    });

    it('decisions that run out fall back to the headless rules with a warning', async () => {
      const cwd = workdir();
      const decisions = new LineDecisionSource(linesReader(['{"decision":"continue"}']), 'd.jsonl');
      const h = await runHarness({ store, cwd, script: [readOnly(), fixAndCommit()], loop: { iteration_approval: 'strict' }, decisions });
      expect(ofType(h.events, 'warning').map((w) => w.message)).toEqual(['d.jsonl: no more decisions after line 1; following the headless rules from now on']);
      expect(ofType(h.events, 'approval_decision').map((d) => d.source)).toEqual(['decisions_file', 'headless']);
      expect(h.outcome.status).toBe('completed');
    });

    it('a decision that does not answer the prompt is an invalid-input error naming the line; the run is left resumable', async () => {
      const cwd = workdir();
      const decisions = new LineDecisionSource(linesReader(['{"decision":"extend"}']), 'd.jsonl');
      await expect(runHarness({ store, cwd, script: [readOnly()], loop: { iteration_approval: 'strict' }, decisions })).rejects.toThrow(
        /d\.jsonl:1: "extend" does not answer the approval prompt of iteration 1/,
      );
      const [run] = await store.loopRuns.list({ limit: 1 });
      // The iteration was committed before the question (its decision pending): a resume asks again.
      expect(run).toMatchObject({ status: 'failed', reason: 'decisions_invalid', iteration: 1 });
      const [row] = await store.loopRuns.listIterations(run!.id);
      expect(row?.decision).toMatchObject({ pending: { evaluation: { gate: { decision: 'continue' } } } });
    });

    it('max iterations headless → incomplete; --resume --extend continues with counters restored and completes', async () => {
      const cwd = workdir();
      const first = await runHarness({ store, cwd, script: [readOnly('a'), readOnly('b')], loop: { max_iterations: 2 } });
      expect(first.outcome).toMatchObject({ status: 'incomplete', reason: 'max_iterations', iterations: 2 });
      expect(markers(cwd)).toEqual([expect.stringMatching(/_loop-partial\.md$/)]);
      const run = await store.loopRuns.get(first.outcome.runId);
      expect(run).toMatchObject({ status: 'incomplete', iteration: 2 });
      expect(run?.hashHistory).toHaveLength(2);
      const spent = (run?.promptTokens ?? 0) + (run?.completionTokens ?? 0);
      expect(spent).toBeGreaterThan(0);

      const second = await runHarness({ store, cwd, script: [fixAndCommit()], resume: { run: run!, extend: 2 } });
      expect(ofType(second.events, 'loop_started')[0]).toMatchObject({ resumed: true, start_iteration: 3, max_iterations: 4 });
      const status = ofType(second.events, 'iteration_status')[0];
      expect(status).toMatchObject({ iteration: 3, max_iterations: 4, previous_hash: run?.hashHistory[1] });
      expect(second.iterationMessages()[0]).toMatch(/^LOOP MODE — iteration 3 of 4/);
      expect(second.outcome).toMatchObject({ status: 'completed', iterations: 3 });
      expect(second.outcome.usage.promptTokens).toBeGreaterThan(run?.promptTokens ?? 0);
      const rows = await store.loopRuns.listIterations(first.outcome.runId);
      expect(rows.map((r) => r.iteration)).toEqual([1, 2, 3]);
      expect(second.outcome.sessionId).toBe(first.outcome.sessionId);
    });

    it('a crash mid-iteration commits nothing of it; resume redoes that iteration (no lost or duplicated rows)', async () => {
      const cwd = workdir();
      let seen = 0;
      const crashed = await runHarness({
        store,
        cwd,
        script: [readOnly('one'), [call('read_file', { path: 'math.js' }), call('read_file', { path: 'README.md' }), { content: 'two' }]],
        // Die after iteration 2's first tool call.
        crashAfter: (ev) => ev.type === 'tool_call' && ev.loop_iteration === 2 && ++seen === 1,
      });
      expect(crashed.outcome).toBeUndefined();
      const runs = await store.loopRuns.list({ limit: 1 });
      const run = runs[0]!;
      expect(run).toMatchObject({ status: 'running', iteration: 1 });
      expect((await store.loopRuns.listIterations(run.id)).map((r) => r.iteration)).toEqual([1]);
      const resumed = await runHarness({ store, cwd, script: [fixAndCommit()], resume: { run, extend: 0 } });
      expect(resumed.outcome).toMatchObject({ status: 'completed', iterations: 2 });
      expect((await store.loopRuns.listIterations(run.id)).map((r) => r.iteration)).toEqual([1, 2]);
    });

    it('an interrupt stops at once, saves the run as interrupted and commits no half iteration', async () => {
      const cwd = workdir();
      const stop = new AbortController();
      const h = await runHarness({
        store,
        cwd,
        // Interrupted as the iteration's second model call starts (it would hang until stopped).
        script: (_req, i) => {
          if (i === 0) return { toolCalls: [{ name: 'read_file', arguments: { path: 'math.js' } }] };
          stop.abort();
          return { hang: true };
        },
        signal: stop.signal,
      });
      expect(h.outcome).toMatchObject({ status: 'interrupted', reason: 'interrupted', iterations: 0 });
      const run = await store.loopRuns.get(h.outcome.runId);
      expect(run).toMatchObject({ status: 'interrupted', iteration: 0 });
      expect(run?.promptTokens).toBeGreaterThan(0);
      expect(await store.loopRuns.listIterations(h.outcome.runId)).toEqual([]);
    });

    it('budgets: tokens spent, the deadline and the per-iteration timeout end the run budget_exhausted (resumable)', async () => {
      const tokens = await runHarness({ store, cwd: workdir(), script: [readOnly(), readOnly()], maxTokens: 150 });
      expect(tokens.outcome).toMatchObject({ status: 'budget_exhausted', reason: 'max_tokens', iterations: 1 });
      expect(ofType(tokens.events, 'loop_complete')[0]).toMatchObject({ resumable: true, resume_command: `navi loop --resume ${tokens.outcome.runId} --max-tokens N` });

      const past = await runHarness({ store, cwd: workdir(), script: [readOnly()], deadlineAt: new Date(Date.now() - 1000) });
      expect(past.outcome).toMatchObject({ status: 'budget_exhausted', reason: 'deadline', iterations: 0 });

      const slow = await runHarness({ store, cwd: workdir(), script: () => ({ hang: true }), iterationTimeoutMs: 150 });
      expect(slow.outcome).toMatchObject({ status: 'budget_exhausted', reason: 'iteration_timeout', iterations: 0 });
      expect((await store.loopRuns.get(slow.outcome.runId))?.status).toBe('budget_exhausted');
    });

    it('a fresh run inherits nothing: an old marker and an old run do not count', async () => {
      const cwd = workdir();
      fs.mkdirSync(path.join(cwd, '.agent', '.context-markers'), { recursive: true });
      const old = path.join(cwd, '.agent', '.context-markers', '2020-01-01-0000_old.md');
      fs.writeFileSync(old, '# old\n');
      fs.utimesSync(old, new Date('2020-01-01'), new Date('2020-01-01'));
      git(cwd, 'add', '-A');
      git(cwd, 'commit', '-qm', 'old marker');
      const h = await runHarness({ store, cwd, script: [readOnly()], loop: { max_iterations: 1 } });
      const status = ofType(h.events, 'iteration_status')[0];
      expect(status?.indicators.marker_created).toBe(false);
      expect(status?.evidence.commits_since_start).toBe(0);
      expect(status?.previous_hash).toBeNull();
    });
  });
});
