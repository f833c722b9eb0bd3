/**
 * Repository contract for loop runs and iterations (SPEC §7, §9): counters a resumed run
 * restores, and iterations committed with them in one transaction. Registered by
 * `defineRepositorySuite`.
 */
import { expect, it } from 'vitest';
import { StorageError } from '../../src/errors.js';
import { errorCode } from '../../src/store/driver-errors.js';
import type { LoopRunStatus, NewLoopIteration, NewLoopRun, Store } from '../../src/store/types.js';
import { AWKWARD_JSON, createSession, type SuiteBackend } from './fixtures.js';

const TASK = { name: 'fix-tests', prompt: 'Make `npm test` pass.', checks: [{ name: 'tests', run: 'npm test', timeout_s: 600 }] };
const CONFIG = { max_iterations: 8, never_pause_on_stagnation: true, stagnation_threshold: 3, approval: 'none' };

async function newRun(store: Store, overrides: Partial<NewLoopRun> = {}): Promise<NewLoopRun> {
  const sessionId = await createSession(store, { kind: 'loop' });
  return { sessionId, taskName: 'fix-tests', task: TASK, config: CONFIG, cwd: '/work/repo', maxIterations: 8, ...overrides };
}

/** Iteration `n` as the runner would record it. */
function iteration(n: number, overrides: Partial<NewLoopIteration> = {}): NewLoopIteration {
  const started = new Date(Date.UTC(2026, 10, 30, 5, n, 0, 123));
  return {
    iteration: n,
    phase: n === 1 ? 'RESEARCH' : 'IMPL',
    indicators: { code_committed: false, tests_passing: n > 1, code_simplified: false, docs_updated: false, ticket_closed: 'skipped', marker_created: false },
    evidence: { files_read: ['src/a.ts'], files_changed: n > 1 ? ['src/a.ts'] : [], checks: [{ name: 'tests', exit_code: n > 1 ? 0 : 1 }] },
    stateHash: n === 1 ? '9ea082' : 'a0524c',
    gateDecision: 'continue',
    gateReason: 'CONTINUE: 1/5 heuristics, no exit signal',
    exitSignal: null,
    statusBlock: `NAVIGATOR_STATUS\nPhase: IMPL\nIteration: ${n}/8`,
    decision: null,
    promptTokens: 1000 * n,
    completionTokens: 100 * n,
    durationMs: 4321,
    startedAt: started,
    finishedAt: new Date(started.getTime() + 4321),
    ...overrides,
  };
}

/** Registers the loop-run tests in the current `describe`. */
export function defineLoopRunSuite(backend: SuiteBackend): void {
  const s = () => backend.store();

  it('loop runs: created with zero counters and time-sortable ids, JSON kept byte-exact', async () => {
    const input = await newRun(s(), { task: AWKWARD_JSON, maxTokens: 2_000_000, deadlineAt: new Date('2026-12-01T13:00:00.000Z'), gitHeadAtStart: 'abc123' });
    const run = await s().loopRuns.create(input);
    expect(run.id).toMatch(/^run_[0-9a-z]{9}_[0-9a-z]{4}$/);
    expect(run).toMatchObject({
      sessionId: input.sessionId,
      taskName: 'fix-tests',
      cwd: '/work/repo',
      status: 'running',
      reason: null,
      iteration: 0,
      maxIterations: 8,
      stagnationCount: 0,
      hashHistory: [],
      diversifications: 0,
      promptTokens: 0,
      completionTokens: 0,
      maxTokens: 2_000_000,
      gitHeadAtStart: 'abc123',
      finishedAt: null,
    });
    expect(run.deadlineAt?.toISOString()).toBe('2026-12-01T13:00:00.000Z');
    expect(run.startedAt).toBeInstanceOf(Date);
    const got = await s().loopRuns.get(run.id);
    expect(got).toEqual(run);
    expect(JSON.stringify(got?.task)).toBe(JSON.stringify(AWKWARD_JSON));
    expect(JSON.stringify(got?.config)).toBe(JSON.stringify(CONFIG));
    expect(await s().loopRuns.get('run_missing')).toBeNull();

    const plain = await s().loopRuns.create(await newRun(s()));
    expect(plain).toMatchObject({ maxTokens: null, deadlineAt: null, gitHeadAtStart: null });
    expect(plain.id > run.id).toBe(true);

    await expect(s().loopRuns.create({ ...input, id: run.id })).rejects.toMatchObject({ code: 'run_exists' });
    await expect(s().loopRuns.create({ ...input, sessionId: 'ghost' })).rejects.toMatchObject({ code: 'session_not_found' });
  });

  it('loop runs: listed newest first', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await s().loopRuns.create(await newRun(s()))).id);
    const listed = (await s().loopRuns.list()).map((r) => r.id);
    expect(listed.slice(0, 3)).toEqual([...ids].reverse());
    expect((await s().loopRuns.list({ limit: 2 })).map((r) => r.id)).toEqual([ids[2], ids[1]]);
    expect(await s().loopRuns.list({ limit: 0 })).toEqual([]);
  });

  it('loop runs: update sets only the patched fields and bumps updated_at', async () => {
    const run = await s().loopRuns.create(await newRun(s()));
    const extended = await s().loopRuns.update(run.id, { maxIterations: 11, config: { ...CONFIG, max_iterations: 11 } });
    expect(extended).toMatchObject({ maxIterations: 11, status: 'running', iteration: 0, reason: null });
    expect(extended.config).toEqual({ ...CONFIG, max_iterations: 11 });
    expect(extended.updatedAt.getTime()).toBeGreaterThanOrEqual(run.updatedAt.getTime());

    const finished = new Date('2026-11-30T06:00:00.000Z');
    const done = await s().loopRuns.update(run.id, { status: 'incomplete', reason: 'max iterations (11) reached', finishedAt: finished, deadlineAt: null });
    expect(done).toMatchObject({ status: 'incomplete', reason: 'max iterations (11) reached', maxIterations: 11 });
    expect(done.finishedAt?.toISOString()).toBe(finished.toISOString());
    const resumed = await s().loopRuns.update(run.id, { status: 'running', reason: null, finishedAt: null });
    expect(resumed).toMatchObject({ status: 'running', reason: null, finishedAt: null });
    expect(await s().loopRuns.get(run.id)).toEqual(resumed);

    await expect(s().loopRuns.update('run_missing', { status: 'failed' })).rejects.toMatchObject({ code: 'run_not_found' });
    await expect(s().loopRuns.update(run.id, { status: 'paused' as LoopRunStatus })).rejects.toBeInstanceOf(StorageError);
  });

  it('commitIteration stores the iteration with the run counters; a reopened store resumes from them', async () => {
    const run = await s().loopRuns.create(await newRun(s()));
    const one = iteration(1, { evidence: AWKWARD_JSON, decision: { decision: 'continue' } });
    const afterOne = await s().loopRuns.commitIteration(run.id, one, {
      hashHistory: ['9ea082'],
      stagnationCount: 1,
      promptTokens: 1000,
      completionTokens: 100,
    });
    expect(afterOne).toMatchObject({ iteration: 1, hashHistory: ['9ea082'], stagnationCount: 1, promptTokens: 1000, status: 'running' });
    const two = iteration(2, { gateDecision: 'exit', gateReason: 'EXIT: 4/5 heuristics + signal', exitSignal: { type: 'exit', success: true, reason: 'tests pass' } });
    await s().loopRuns.commitIteration(run.id, two, {
      hashHistory: ['9ea082', 'a0524c'],
      stagnationCount: 1,
      diversifications: 1,
      promptTokens: 3000,
      completionTokens: 300,
      status: 'completed',
      reason: 'tests pass',
      finishedAt: two.finishedAt,
    });

    const reopened = await backend.reopen();
    const restored = await reopened.loopRuns.get(run.id);
    expect(restored).toMatchObject({
      iteration: 2,
      hashHistory: ['9ea082', 'a0524c'],
      stagnationCount: 1,
      diversifications: 1,
      promptTokens: 3000,
      completionTokens: 300,
      status: 'completed',
      reason: 'tests pass',
    });
    expect(restored?.finishedAt?.toISOString()).toBe(two.finishedAt.toISOString());

    const rows = await reopened.loopRuns.listIterations(run.id);
    expect(rows).toEqual([
      { runId: run.id, ...one },
      { runId: run.id, ...two },
    ]);
    expect(JSON.stringify(rows[0]?.evidence)).toBe(JSON.stringify(AWKWARD_JSON));
    expect(JSON.stringify(rows[1]?.indicators)).toBe(JSON.stringify(two.indicators));
    expect(await reopened.loopRuns.listIterations('run_missing')).toEqual([]);
  });

  it('commitIteration refuses an iteration already stored, writing nothing', async () => {
    const run = await s().loopRuns.create(await newRun(s()));
    await s().loopRuns.commitIteration(run.id, iteration(1), { hashHistory: ['9ea082'], promptTokens: 1000 });
    const before = await s().loopRuns.get(run.id);

    const err = await s()
      .loopRuns.commitIteration(run.id, iteration(1, { phase: 'VERIFY' }), { hashHistory: ['9ea082', 'ffffff'], promptTokens: 9999, status: 'completed' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect(err).toMatchObject({ code: 'iteration_exists', exitCode: 1 });
    expect((err as Error).message).toContain(run.id);
    expect(await s().loopRuns.get(run.id)).toEqual(before);
    const rows = await s().loopRuns.listIterations(run.id);
    expect(rows.map((r) => [r.iteration, r.phase])).toEqual([[1, 'RESEARCH']]);

    await expect(s().loopRuns.commitIteration('run_missing', iteration(1), {})).rejects.toMatchObject({ code: 'run_not_found' });
  });

  it('commitIteration is all or nothing when either write fails', async () => {
    const run = await s().loopRuns.create(await newRun(s()));
    await s().loopRuns.commitIteration(run.id, iteration(1), { hashHistory: ['9ea082'] });
    const before = await s().loopRuns.get(run.id);

    // The run update runs first and succeeds; the database then rejects the iteration row.
    const badRow = iteration(2, { durationMs: Number.NaN });
    const rowErr = await s()
      .loopRuns.commitIteration(run.id, badRow, { hashHistory: ['9ea082', 'a0524c'], promptTokens: 5 })
      .catch((e: unknown) => e);
    expect(rowErr).toBeInstanceOf(StorageError);
    // Rejected by the database (invalid bigint), not by JavaScript before the transaction.
    expect(errorCode(rowErr)).toBe('22P02');
    expect(await s().loopRuns.get(run.id)).toEqual(before);
    expect(await s().loopRuns.listIterations(run.id)).toHaveLength(1);

    // The run update violates the status check: the iteration row is not written either.
    const runErr = await s()
      .loopRuns.commitIteration(run.id, iteration(2), { status: 'paused' as LoopRunStatus })
      .catch((e: unknown) => e);
    expect(runErr).toBeInstanceOf(StorageError);
    expect(errorCode(runErr)).toBe('23514');
    expect(await s().loopRuns.listIterations(run.id)).toHaveLength(1);

    // A value that cannot be stored: refused before anything is written.
    await expect(s().loopRuns.commitIteration(run.id, iteration(2, { evidence: { n: 1n } }), {})).rejects.toMatchObject({ code: 'store_value_not_json' });
    expect(await s().loopRuns.get(run.id)).toEqual(before);

    // And the same iteration then commits normally.
    expect(await s().loopRuns.commitIteration(run.id, iteration(2), {})).toMatchObject({ iteration: 2 });
  });

  it('settleIteration replaces a committed iteration\'s pending decision and updates the run together', async () => {
    const run = await s().loopRuns.create(await newRun(s()));
    await s().loopRuns.commitIteration(run.id, iteration(1, { decision: { pending: { final_text: 'x' } } }), { reason: 'awaiting_decision' });
    const after = await s().loopRuns.settleIteration(run.id, 1, { approval: { decision: 'continue' } }, { reason: null, hashHistory: ['9ea082'] });
    expect(after).toMatchObject({ iteration: 1, reason: null, hashHistory: ['9ea082'] });
    expect((await s().loopRuns.listIterations(run.id))[0]?.decision).toEqual({ approval: { decision: 'continue' } });
    // An iteration that is not stored: nothing changes.
    await expect(s().loopRuns.settleIteration(run.id, 2, {}, { reason: 'x' })).rejects.toMatchObject({ code: 'iteration_not_found' });
    expect((await s().loopRuns.get(run.id))?.reason).toBeNull();
    await expect(s().loopRuns.settleIteration('run_missing', 1, {}, {})).rejects.toMatchObject({ code: 'run_not_found' });
  });

  it('removing a loop session deletes its runs and their iterations', async () => {
    const input = await newRun(s());
    const run = await s().loopRuns.create(input);
    await s().loopRuns.commitIteration(run.id, iteration(1), {});
    expect(await s().sessions.remove(input.sessionId)).toBe(true);
    expect(await s().loopRuns.get(run.id)).toBeNull();
    expect(await s().loopRuns.listIterations(run.id)).toEqual([]);
  });
}
