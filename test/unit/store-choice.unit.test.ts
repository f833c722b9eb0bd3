/** The store an end-to-end test runs on (test/support/store-choice.ts). */
import { describe, expect, it } from 'vitest';
import { everyStoreRunsAll, storeFor } from '../support/store-choice.js';

describe('storeFor', () => {
  it('is stable: the same file and name, the same store, today and on every machine', () => {
    expect(storeFor('test/scenario/tool-calls.test.ts', 'runs a tool and answers')).toBe(storeFor('test/scenario/tool-calls.test.ts', 'runs a tool and answers'));
    expect([storeFor('a.test.ts', 'x'), storeFor('a.test.ts', 'y'), storeFor('b.test.ts', 'x')]).toEqual(['postgres', 'postgres', 'pglite']);
  });

  it('gives each store about half of many names', () => {
    // A hash, not a clock: the same 400 names split the same way on every run and machine.
    const names = Array.from({ length: 400 }, (_, i) => `case ${i}`);
    expect(names.filter((n) => storeFor('test/x.test.ts', n) === 'pglite')).toHaveLength(202);
  });
});

describe('everyStoreRunsAll', () => {
  it.each([
    [{}, true],
    [{ DATABASE_URL: 'postgres://h/db' }, false],
    [{ DATABASE_URL: 'postgres://h/db', NAVI_TEST_STORES: 'both' }, true],
    [{ DATABASE_URL: '' }, true],
  ])('%j → %s', (env, all) => {
    expect(everyStoreRunsAll(env)).toBe(all);
  });
});
