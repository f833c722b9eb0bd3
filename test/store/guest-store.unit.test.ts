/**
 * The pure rules of PGlite sharing (issue 18, items 1, 2, 13): which failures mean the holder is
 * gone, which statements a guest may run again after that, what `store_locked` says, and which
 * directories are navi's.
 */
import { describe, expect, it } from 'vitest';
import { StorageError } from '../../src/errors.js';
import { lossPhase, retryAfterLoss } from '../../src/store/guest-store.js';
import { lockedMessage } from '../../src/store/lock.js';
import { isNaviDataDir } from '../../src/store/open.js';

const wrapped = (code: string): StorageError =>
  new StorageError('store_query_failed', 'Database error during x', { cause: Object.assign(new Error(`connect ${code} /d/navi.sock`), { code }) });

describe('lossPhase', () => {
  it.each([
    ['ENOENT', 'connect'],
    ['ECONNREFUSED', 'connect'],
    ['CONNECT_TIMEOUT', 'connect'],
    ['57P03', 'connect'],
    ['CONNECTION_CLOSED', 'in_flight'],
    ['CONNECTION_DESTROYED', 'in_flight'],
    ['ECONNRESET', 'in_flight'],
    ['EPIPE', 'in_flight'],
    ['57P01', 'in_flight'],
    ['23505', null],
    ['23503', null],
    ['CONNECTION_ENDED', null], // we ended it ourselves
  ] as const)('%s → %s', (code, phase) => {
    expect(lossPhase(wrapped(code))).toBe(phase);
  });
  it('errors without a driver cause are not a loss', () => {
    expect(lossPhase(new StorageError('session_not_found', 'Session s does not exist.'))).toBeNull();
  });
});

describe('retryAfterLoss', () => {
  it.each([
    ['messages.append', 'connect', 'retry'],
    ['messages.append', 'in_flight', 'verify_append'],
    ['sessions.addUsage', 'in_flight', 'never'],
    ['archives.compactContext', 'in_flight', 'never'],
    ['planningLogs.append', 'in_flight', 'never'],
    ['sessions.create', 'in_flight', 'retry_exists_is_done'],
    ['loopRuns.create', 'in_flight', 'retry_exists_is_done'],
    ['loopRuns.commitIteration', 'in_flight', 'retry_exists_is_done'],
    ['loopRuns.update', 'in_flight', 'retry'],
    ['context.replace', 'in_flight', 'retry'],
    ['state.setTodos', 'in_flight', 'retry'],
    ['memories.add', 'in_flight', 'retry'],
    ['sessions.list', 'in_flight', 'retry'],
    ['messages.list', 'in_flight', 'retry'],
    ['something.new', 'in_flight', 'never'],
    ['something.new', 'connect', 'retry'],
  ] as const)('%s after a %s loss → %s', (op, phase, verdict) => {
    expect(retryAfterLoss(op, phase)).toBe(verdict);
  });
});

describe('lockedMessage', () => {
  const owner = { pid: 12, hostname: 'box', started_at: '2026-12-03T10:00:00.000Z' };
  it('a holder on this machine: never suggests deleting a live lock', () => {
    const m = lockedMessage('/d/navi.lock', owner, 'box');
    expect(m).toContain('held by process 12 on box (since 2026-12-03T10:00:00.000Z)');
    expect(m).toContain('does not serve it to other navi processes');
    expect(m).toContain('DATABASE_URL');
    expect(m).toContain('never delete it while that process runs');
    expect(m).not.toMatch(/one navi process at a time/);
    expect(m).not.toContain('\n');
  });
  it('a holder on another machine: delete only if that machine is gone', () => {
    expect(lockedMessage('/d/navi.lock', owner, 'other')).toContain('only if box is down for good, delete the lock file');
  });
  it('an unreadable lock names another navi process', () => {
    expect(lockedMessage('/d/navi.lock', 'unreadable', 'box')).toContain('held by another navi process');
  });
});

describe('isNaviDataDir', () => {
  it.each([
    [[], true],
    [['navi.lock'], true],
    [['navi.lock', 'navi-memory-cache.json', 'navi.endpoint'], true],
    [['PG_VERSION', 'base', 'global', 'navi.lock'], true],
    [['navi-unpacking', 'base'], true],
    [['package.json', 'src'], false],
    [['.bashrc', '.config', 'Documents'], false],
    [['navi.lock', 'notes.txt'], false],
  ] as const)('%j → %s', (names, navi) => {
    expect(isNaviDataDir(names)).toBe(navi);
  });
});
