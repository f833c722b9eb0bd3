/**
 * Stored loop runs for the report tests: a run record and iteration records with the fields the
 * loop runner writes (evidence as `evidenceRecord` stores it), built from a few overrides.
 */
import type { LoopIterationRecord, LoopRunRecord } from '../../src/store/loop-run-types.js';

const T0 = new Date('2026-12-01T10:00:00.000Z');

export function storedRun(over: Partial<LoopRunRecord> = {}): LoopRunRecord {
  return {
    id: 'run_0test_abcd',
    sessionId: 'session-1',
    taskName: 'fix-add',
    task: { prompt: 'Fix it.' },
    config: {},
    cwd: '/work/project',
    status: 'completed',
    reason: 'gate_passed',
    iteration: 2,
    maxIterations: 5,
    stagnationCount: 1,
    hashHistory: [],
    diversifications: 0,
    promptTokens: 12000,
    completionTokens: 345,
    maxTokens: null,
    deadlineAt: null,
    gitHeadAtStart: null,
    startedAt: T0,
    updatedAt: new Date(T0.getTime() + 65_000),
    finishedAt: new Date(T0.getTime() + 65_000),
    ...over,
  };
}

export interface CheckSpec {
  name: string;
  exit: number | null;
  out?: string;
  timedOut?: boolean;
}

export function storedIteration(n: number, over: Partial<LoopIterationRecord> & { checks?: CheckSpec[] } = {}): LoopIterationRecord {
  const { checks = [], ...rest } = over;
  const started = new Date(T0.getTime() + (n - 1) * 30_000);
  return {
    runId: 'run_0test_abcd',
    iteration: n,
    phase: 'IMPL',
    indicators: { code_committed: false, tests_passing: true, code_simplified: false, docs_updated: false, ticket_closed: 'skipped', marker_created: false },
    evidence: {
      checks: checks.map((c) => ({ name: c.name, exit_code: c.exit, duration_ms: 1234, timed_out: c.timedOut === true, output_tail: c.out ?? '' })),
    },
    stateHash: `a0b${n}c${n}`,
    gateDecision: 'continue',
    gateReason: 'CONTINUE: 1/5 heuristics, no exit signal',
    exitSignal: null,
    statusBlock: `NAVIGATOR_STATUS\nPhase: IMPL\nIteration: ${n}/5\n`,
    decision: null,
    promptTokens: 6000,
    completionTokens: 170,
    durationMs: 30_000,
    startedAt: started,
    finishedAt: new Date(started.getTime() + 30_000),
    ...rest,
  };
}
