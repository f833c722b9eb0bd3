/**
 * A turn's options split into run settings (what a sub-agent inherits whole) and the turn's
 * input: the outage budget (`llm.outage_retry`, issue 17 point 11) is a run setting.
 */
import { describe, expect, it } from 'vitest';
import { splitTurnOptions } from '../../src/agent/agent-types.js';
import { options } from './helpers.js';

describe('splitTurnOptions', () => {
  it.each([
    ['a loop run’s budget', 300_000],
    ['none (a one-shot)', undefined],
  ])('the outage budget is a run setting: %s', (_, outageRetryMs) => {
    const { settings, input } = splitTurnOptions(options(outageRetryMs === undefined ? {} : { outageRetryMs }));
    expect(settings.outageRetryMs).toBe(outageRetryMs);
    expect('outageRetryMs' in input).toBe(false);
    expect(input.message).toBe('do the thing');
  });
});
