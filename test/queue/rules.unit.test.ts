/**
 * The queue's pure rules (issue 21), table-driven: a job's `navi loop` command line, pg-boss
 * states as navi's statuses, what a worker does when a job's loop ends, the lease timing, and
 * when a cron schedule is due (the clock is a parameter).
 */
import { describe, expect, it } from 'vitest';
import { checkCron, dueSlot, nextSlot } from '../../src/queue/cron.js';
import { queueTiming } from '../../src/queue/engine.js';
import { isGitUrl, jobStatus, loopArgv, type JobData } from '../../src/queue/job-data.js';
import { BUSY_RETRY_S, ERROR_RETRY_S, jobVerdict, type JobVerdict, type StopCause } from '../../src/queue/job-outcome.js';

const base: JobData = { task: 'tasks/fix.yaml', repo: '/srv/app', loop: {} };

describe('loopArgv', () => {
  const cases: Array<[string, JobData, string | null, string[]]> = [
    ['a new run of a task', base, null, ['loop', 'tasks/fix.yaml', '-o', 'stream-json']],
    [
      'every loop option on a new run',
      { ...base, loop: { model: 'qwen3:8b', profile: 'coder', max_iterations: 8, max_tokens: 1000, deadline: '8h', iteration_timeout: '20m', decisions: '/d.jsonl', approval: 'strict', never_pause: true, strategy: 'radical' } },
      null,
      ['loop', 'tasks/fix.yaml', '--model', 'qwen3:8b', '--profile', 'coder', '--max-iterations', '8', '--max-tokens', '1000', '--deadline', '8h', '--iteration-timeout', '20m', '--decisions', '/d.jsonl', '--approval', 'strict', '--strategy', 'radical', '--never-pause', '-o', 'stream-json'],
    ],
    [
      'a resumed run keeps its loop settings and first deadline',
      { ...base, loop: { model: 'm', max_iterations: 8, deadline: '8h', approval: 'strict', decisions: '/d.jsonl', never_pause: true, strategy: 'combine', max_tokens: 5 } },
      'run_1',
      ['loop', '--resume', 'run_1', '--model', 'm', '--max-tokens', '5', '--decisions', '/d.jsonl', '-o', 'stream-json'],
    ],
    ['the sandbox on a new run', { ...base, loop: { sandbox: 'workspace-write' } }, null, ['loop', 'tasks/fix.yaml', '--sandbox', 'workspace-write', '-o', 'stream-json']],
    // --sandbox overrides the stored task's on a resume too: a resumed job is never run without it.
    ['the sandbox on a resume', { ...base, loop: { sandbox: 'read-only' } }, 'run_1', ['loop', '--resume', 'run_1', '--sandbox', 'read-only', '-o', 'stream-json']],
  ];
  it.each(cases)('%s', (_name, data, resume, want) => {
    expect(loopArgv(data, resume)).toEqual(want);
  });
});

describe('jobStatus', () => {
  it.each([
    ['created', 'queued'],
    ['retry', 'queued'],
    ['active', 'running'],
    ['completed', 'completed'],
    ['failed', 'failed'],
    ['cancelled', 'cancelled'],
  ])('%s → %s', (state, status) => {
    expect(jobStatus(state)).toBe(status);
  });
});

describe('isGitUrl', () => {
  it.each([
    ['https://github.com/a/b.git', true],
    ['ssh://git@host/a/b', true],
    ['file:///srv/repo', true],
    ['git@github.com:a/b.git', true],
    ['/srv/app', false],
    ['../app', false],
    ['app', false],
  ])('%s → %s', (repo, want) => {
    expect(isGitUrl(repo)).toBe(want);
  });
});

describe('jobVerdict', () => {
  const cases: Array<[number | null, StopCause, string | null, JobVerdict]> = [
    [0, 'none', 'gate_passed', { kind: 'complete' }],
    [130, 'shutdown', 'interrupted', { kind: 'hand_back', delaySeconds: 0 }],
    // The worker stopping wins over whatever the loop said while stopping.
    [1, 'shutdown', null, { kind: 'hand_back', delaySeconds: 0 }],
    [null, 'none', null, { kind: 'hand_back', delaySeconds: 0 }],
    [130, 'none', 'interrupted', { kind: 'hand_back', delaySeconds: 0 }],
    [2, 'none', 'run_busy', { kind: 'hand_back', delaySeconds: BUSY_RETRY_S }],
    [2, 'none', 'flag_invalid', { kind: 'fail' }],
    [3, 'none', 'max_iterations', { kind: 'fail' }],
    [4, 'none', 'stagnation', { kind: 'fail' }],
    [5, 'none', 'deadline', { kind: 'fail' }],
    [1, 'none', 'unexpected_error', { kind: 'hand_back', delaySeconds: ERROR_RETRY_S }],
    [75, 'none', 'ollama_unreachable', { kind: 'hand_back', delaySeconds: ERROR_RETRY_S }],
    [130, 'lease_lost', 'interrupted', { kind: 'let_go' }],
    [0, 'lease_lost', 'gate_passed', { kind: 'let_go' }],
  ];
  it.each(cases)('exit %s, stopped for %s (%s)', (exitCode, cause, resultReason, want) => {
    expect(jobVerdict({ exitCode, cause, resultReason })).toEqual(want);
  });
});

describe('queueTiming', () => {
  it.each([
    [{}, { leaseSeconds: 300, renewMs: 10_000, maintenanceSeconds: 60 }],
    [{ NAVI_QUEUE_LEASE_S: '3' }, { leaseSeconds: 3, renewMs: 750, maintenanceSeconds: 1 }],
    [{ NAVI_QUEUE_LEASE_S: '60' }, { leaseSeconds: 60, renewMs: 10_000, maintenanceSeconds: 30 }],
    // Nonsense falls back to the default rather than a lease that expires at once.
    [{ NAVI_QUEUE_LEASE_S: '0' }, { leaseSeconds: 300, renewMs: 10_000, maintenanceSeconds: 60 }],
    [{ NAVI_QUEUE_LEASE_S: 'soon' }, { leaseSeconds: 300, renewMs: 10_000, maintenanceSeconds: 60 }],
  ])('%j', (env, want) => {
    expect(queueTiming(env)).toMatchObject(want);
  });
});

describe('cron', () => {
  const at = (iso: string): Date => new Date(iso);
  const cases: Array<[string, string, string, string, string | null]> = [
    ['nightly, not yet', '0 2 * * *', '2026-12-03T02:00:00Z', '2026-12-04T01:59:59Z', null],
    ['nightly, on the slot', '0 2 * * *', '2026-12-03T02:00:00Z', '2026-12-04T02:00:00Z', '2026-12-04T02:00:00.000Z'],
    ['nightly, a minute late', '0 2 * * *', '2026-12-03T02:00:00Z', '2026-12-04T02:01:00Z', '2026-12-04T02:00:00.000Z'],
    // A fleet down for three nights starts one run, for the latest slot.
    ['missed slots fire once', '0 2 * * *', '2026-12-01T02:00:00Z', '2026-12-04T03:00:00Z', '2026-12-04T02:00:00.000Z'],
    ['every 5 minutes', '*/5 * * * *', '2026-12-03T10:00:00Z', '2026-12-03T10:07:00Z', '2026-12-03T10:05:00.000Z'],
    ['created just after a slot', '*/5 * * * *', '2026-12-03T10:05:01Z', '2026-12-03T10:09:59Z', null],
    ['seconds field', '*/10 * * * * *', '2026-12-03T10:00:00Z', '2026-12-03T10:00:10Z', '2026-12-03T10:00:10.000Z'],
  ];
  it.each(cases)('%s', (_name, expr, since, now, want) => {
    const slot = dueSlot(expr, at(since), at(now));
    expect(slot === null ? null : slot.toISOString()).toBe(want);
  });

  it('the next slot', () => {
    expect(nextSlot('0 2 * * *', at('2026-12-03T15:00:00Z')).toISOString()).toBe('2026-12-04T02:00:00.000Z');
  });

  it.each(['', 'nightly', '0 2 * *', '99 2 * * *', '0 2 * * * * *'])('refuses %j (exit 2)', (expr) => {
    expect(() => checkCron(expr)).toThrow(/--cron/);
  });
});
