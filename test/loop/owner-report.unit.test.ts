/** `ownerReport` (issue 18, item 6): what `runs list` says about a run's owner. */
import { describe, expect, it } from 'vitest';
import { ownerReport, STALE_MS, type OwnershipInput } from '../../src/loop/ownership.js';

const now = Date.parse('2026-12-03T12:00:00Z');
const base: OwnershipInput = {
  owner: { pid: 41, host: 'here', since: '2026-12-03T11:00:00Z' },
  updatedAt: new Date(now - 5_000),
  me: { pid: 99, host: 'here' },
  now,
  isAlive: (pid) => pid === 41,
};

describe('ownerReport', () => {
  it.each([
    ['running, owner alive, fresh heartbeat', 'running', {}, true, 'pid 41 on here'],
    ['running, owner pid dead on this host', 'running', { isAlive: (): boolean => false }, false, 'pid 41 on here is gone (its process has exited)'],
    ['running, pid alive but no heartbeat (pid reused)', 'running', { updatedAt: new Date(now - STALE_MS - 60_000) }, false, 'pid 41 on here is gone (no heartbeat for 2 min)'],
    ['running on another host, fresh heartbeat', 'running', { owner: { pid: 41, host: 'there', since: '' } }, true, 'pid 41 on there'],
    ['running on another host, silent', 'running', { owner: { pid: 41, host: 'there', since: '' }, updatedAt: new Date(now - STALE_MS - 1_000) }, false, 'pid 41 on there is gone (no heartbeat for 61 s)'],
    ['running, no owner recorded, silent', 'running', { owner: null, updatedAt: new Date(now - STALE_MS - 1_000) }, false, 'unknown owner is gone (no heartbeat for 61 s)'],
    ['running, this very process', 'running', { me: { pid: 41, host: 'here' } }, true, 'pid 41 on here'],
    ['finished run', 'completed', { isAlive: (): boolean => false }, null, 'pid 41 on here'],
  ] as const)('%s', (_what, status, patch, alive, text) => {
    expect(ownerReport(status, { ...base, ...patch })).toMatchObject({ alive, text });
  });
});
