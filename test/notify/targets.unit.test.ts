/**
 * Which targets a loop notifies (config, task file, `--notify`) and the checks made before it
 * starts: exit 2 for a bad `--notify` or a `${VAR}` that is not set, naming the target redacted.
 */
import { describe, expect, it } from 'vitest';
import { NotifyListSchema } from '../../src/config/notify-schema.js';
import { problemsFrom } from '../../src/config/issues.js';
import { isNaviError } from '../../src/errors.js';
import { endingKind } from '../../src/loop/notify-hook.js';
import { collectTargets, requireVariables } from '../../src/notify/targets.js';

const SECRET = 'T0/B0/zzzsecret';

function thrown(fn: () => unknown): { code: string; message: string; exit: number } | null {
  try {
    fn();
    return null;
  } catch (err) {
    if (!isNaviError(err)) throw err;
    return { code: err.code, message: err.message, exit: err.exitCode };
  }
}

describe('collectTargets', () => {
  it('config, then task, then each --notify; the same URL once', () => {
    const targets = collectTargets({
      config: [{ url: 'https://a.test/x', events: ['failed'] }],
      task: [{ url: 'https://b.test/y', format: 'slack' }, { url: 'https://a.test/x' }],
      flags: ['https://c.test/z', 'https://b.test/y'],
    });
    expect(targets).toEqual([{ url: 'https://a.test/x', events: ['failed'] }, { url: 'https://b.test/y', format: 'slack' }, { url: 'https://c.test/z' }]);
    expect(collectTargets({ config: [], flags: 'https://one.test/' })).toEqual([{ url: 'https://one.test/' }]);
    expect(collectTargets({ config: [] })).toEqual([]);
  });

  it.each([
    [`ftp://hooks.example/${SECRET}`, '--notify ftp://hooks.example: must be an http:// or https:// URL'],
    ['', '--notify (notify URL): give a URL'],
  ])('a bad --notify %j is exit 2 naming it redacted', (url, message) => {
    const err = thrown(() => collectTargets({ config: [], flags: [url] }));
    expect(err).toMatchObject({ code: 'flag_invalid', exit: 2 });
    expect(err?.message).toContain(message);
    expect(err?.message).not.toContain(SECRET);
  });
});

describe('requireVariables', () => {
  it.each([
    [{ url: 'https://hooks.slack.com/services/${HOOK}' }, { HOOK: SECRET }, null],
    [{ url: 'https://plain.test/x' }, {}, null],
    [{ url: 'https://hooks.slack.com/services/${HOOK}' }, {}, 'notify target https://hooks.slack.com: ${HOOK} is not set (read from the environment when a notification is sent)'],
    [{ url: '${A}/${B}' }, { A: '' }, 'notify target ${A}: ${A}, ${B} are not set (read from the environment when a notification is sent)'],
    [{ url: '${HOOK}' }, { HOOK: `mailto:${SECRET}` }, 'notify target ${HOOK}: once expanded, it must be an http:// or https:// URL (`${VAR}` references are expanded when sending)'],
  ])('%j', (target, env, message) => {
    const err = thrown(() => requireVariables([target], env));
    if (message === null) expect(err).toBeNull();
    else {
      expect(err).toMatchObject({ exit: 2, message });
      expect(err?.message).not.toContain(SECRET);
    }
  });
});

describe('the notify list schema', () => {
  it('a bad URL is named redacted, never echoed whole', () => {
    const raw = [{ url: `ftp://hooks.example/${SECRET}` }];
    const parsed = NotifyListSchema.safeParse(raw);
    expect(parsed.success).toBe(false);
    const problems = problemsFrom(parsed.error?.issues ?? [], raw, NotifyListSchema);
    expect(problems).toEqual([{ path: '[0].url', text: 'must be an http:// or https:// URL (`${VAR}` references are expanded when sending) (got ftp://hooks.example…)' }]);
  });
  it.each([
    [[{ url: 'https://x.test/', events: [] }], 'must name at least one event'],
    [[{ url: 'https://x.test/', events: ['done'] }], 'must be one of "waiting", "failed", "finished"'],
    [[{ url: 'https://x.test/', format: 'teams' }], 'must be one of "slack", "discord", "generic"'],
    [[{ url: 'https://x.test/', headers: {} }], 'unknown key'],
  ])('%j', (raw, text) => {
    const parsed = NotifyListSchema.safeParse(raw);
    expect(parsed.success).toBe(false);
    expect(problemsFrom(parsed.error?.issues ?? [], raw, NotifyListSchema).map((p) => p.text).join('; ')).toContain(text);
  });
});

describe('endingKind: which endings are failures', () => {
  it.each([
    ['completed', 'gate_passed', 'finished'],
    ['completed', 'user_completed', 'finished'],
    ['interrupted', 'interrupted', 'finished'],
    ['interrupted', 'awaiting_decision', 'finished'],
    ['aborted', 'user_aborted', 'finished'],
    ['aborted', 'stagnation', 'failed'],
    ['aborted', 'oscillation', 'failed'],
    ['incomplete', 'max_iterations', 'failed'],
    ['budget_exhausted', 'deadline', 'failed'],
    ['failed', 'context_too_large', 'failed'],
  ] as const)('%s / %s → %s', (status, reason, kind) => {
    expect(endingKind(status, reason)).toBe(kind);
  });
});
