/**
 * Durations users write (`budget.deadline`, `--deadline`, `--iteration-timeout`, SPEC §5–§7):
 * any text must parse to a positive whole number of milliseconds or be refused, and a duration
 * navi accepts must be one it can honour. Node's timers cannot wait longer than 2^31-1 ms
 * (~24.8 days): a longer delay fires after 1 ms, so an accepted `deadline: 30d` would end a loop
 * at once as `budget_exhausted`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tryParseDuration } from '../../src/config/duration.js';
import { turnStops } from '../../src/loop/runner-turn.js';
import { describeRun, resultOf, scenario, SCENARIO_TIMEOUT_MS } from '../scenario/helpers.js';
import { stackLines } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import { fcParams } from './support.js';

describe('tryParseDuration (property)', () => {
  it('never throws; gives undefined or a positive safe integer of milliseconds', () => {
    const arbDuration = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc
        .array(fc.tuple(fc.oneof(fc.nat().map(String), fc.constantFrom('0.5', '1e3', '99999999999999999999', '0', '00')), fc.constantFrom('ms', 's', 'm', 'h', 'd', 'w', '')), { minLength: 1, maxLength: 4 })
        .map((parts) => parts.map(([n, u]) => n + u).join('')),
    );
    fc.assert(
      fc.property(arbDuration, (text) => {
        const ms = tryParseDuration(text);
        if (ms === undefined) return;
        expect(Number.isSafeInteger(ms) && ms > 0, `${JSON.stringify(text)} → ${ms}`).toBe(true);
      }),
      fcParams(),
    );
  });
});

/** Largest delay a Node timer honours. */
const MAX_TIMER_MS = 2 ** 31 - 1;

describe('an accepted deadline is honoured, not fired at once', () => {
  const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

  it('deadlines from an hour to "99999999999999999999h" are honoured (or refused), never fired at once', async () => {
    const failures: string[] = [];
    for (const text of ['1h', '24d', '25d', '30d', '1000h', '99999999999999999999h']) {
      const ms = tryParseDuration(text);
      // Refusing an unreasonable deadline (exit 2) is as good as honouring it.
      if (ms === undefined) continue;
      const now = Date.now();
      const deadlineAt = new Date(now + ms);
      if (Number.isNaN(deadlineAt.getTime())) {
        failures.push(`${text}: new Date(now + ${ms}) is an Invalid Date`);
        continue;
      }
      const stops = turnStops(new AbortController().signal, deadlineAt, 60_000, () => now);
      try {
        await wait(30);
        if (stops.reason() !== null) failures.push(`${text} (${ms} ms${ms > MAX_TIMER_MS ? ', beyond the 2^31-1 ms timer limit' : ''}) fired after 30 ms`);
      } finally {
        stops.dispose();
      }
    }
    expect(failures).toEqual([]);
  });

  it.each(['30m', '25d'])('iteration timeout %s', async (text) => {
    const ms = tryParseDuration(text);
    if (ms === undefined) return;
    const stops = turnStops(new AbortController().signal, null, ms, () => Date.now());
    try {
      await wait(30);
      expect(stops.reason(), `an iteration timeout of ${text} fired after 30 ms`).toBeNull();
    } finally {
      stops.dispose();
    }
  });
});

/** Through the CLI: `navi loop --deadline` with values the parser accepts. */
forEachBackend(
  (backend) => {
    describe('navi loop --deadline', () => {
      it.each([
        ['30d', 'a month: longer than a Node timer can wait'],
        ['99999999999999999999h', 'beyond the largest Date'],
      ])('--deadline %s (%s): refused with exit 2 or honoured, never exit 1 or an instant budget_exhausted', async (deadline) => {
        const s = await scenario(backend, { turns: [{ content: 'working on it' }] });
        const run = await s.navi(['loop', 'do the thing', '--max-iterations', '1', '--deadline', deadline, '-o', 'json']);
        expect(stackLines(run.stderr)).toEqual([]);
        if (run.code === 2) return;
        expect(run.code, describeRun(run)).toBe(3);
        expect(resultOf(run)).toMatchObject({ status: 'incomplete', reason: 'max_iterations' });
      }, SCENARIO_TIMEOUT_MS);
    });
  },
);
