/**
 * Where a loop's notifications link (src/cli/loop-notify.ts): config `notify_link_base` wins, else
 * the address of the `navi serve` that started the loop, else no link; nothing without a target.
 */
import { describe, expect, it } from 'vitest';
import { loopNotifier } from '../../src/cli/loop-notify.js';
import { NaviConfigSchema } from '../../src/config/schema.js';

const target = [{ url: 'http://127.0.0.1:9/hook' }];
const config = (extra: Record<string, unknown> = {}) => NaviConfigSchema.parse(extra);

describe('loopNotifier: the link to the run page', () => {
  const cases: Array<[string, Record<string, unknown>, string | undefined, string | undefined]> = [
    ['a CLI loop without notify_link_base: no link', {}, undefined, undefined],
    ['a CLI loop with notify_link_base', { notify_link_base: 'http://box:7777/' }, undefined, 'http://box:7777/#/runs/r%201'],
    ['a loop navi serve started', {}, 'http://127.0.0.1:4321', 'http://127.0.0.1:4321/#/runs/r%201'],
    ['notify_link_base wins over the address serve listens on', { notify_link_base: 'https://navi.example' }, 'http://127.0.0.1:4321', 'https://navi.example/#/runs/r%201'],
  ];
  it.each(cases)('%s', async (_name, extra, serverBase, want) => {
    const opts = await loopNotifier(target, config(extra), {}, serverBase);
    expect(opts.notifier).toBeDefined();
    expect(opts.pageUrl?.('r 1')).toBe(want);
  });

  it('no target, no notifier (and no link)', async () => {
    expect(await loopNotifier([], config(), {}, 'http://127.0.0.1:4321')).toEqual({});
  });
});
