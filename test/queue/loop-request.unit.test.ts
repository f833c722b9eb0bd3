/**
 * One loop request (issue 35): a queued job's options go to its worker as `navi loop`'s command
 * line and come back through the same reading of the flags `navi loop` and `queue add` use —
 * nothing lost or changed on the way, for every option the request has.
 */
import yargs from 'yargs';
import { describe, expect, it } from 'vitest';
import { globalFlags, withFlags, flagsOf, spellings } from '../../src/cli/flags.js';
import { loopRequestOf, type LoopFlagArgs } from '../../src/cli/loop-flags.js';
import { LOOP_OPTION_KEYS, LoopRequestSchema, NEW_RUN_ONLY, type LoopOptions } from '../../src/loop/loop-request.js';
import { loopArgv } from '../../src/queue/job-data.js';
import { startRunBody } from '../../src/serve/api-schemas.js';

/** `navi loop`'s flags parsed in process, as the CLI parses them. */
function parseLoop(argv: readonly string[]): LoopFlagArgs {
  const parser = withFlags(withFlags(yargs([]), globalFlags()), flagsOf('loop')).strict(false);
  return parser.parseSync([...argv]) as unknown as LoopFlagArgs;
}

const EVERY_OPTION: LoopOptions = {
  model: 'qwen3:8b',
  profile: 'coder',
  max_iterations: 7,
  max_tokens: 90_000,
  deadline: '8h',
  iteration_timeout: '10m',
  decisions: '/srv/decisions.jsonl',
  approval: 'strict',
  strategy: 'radical',
  sandbox: 'read-only',
  never_pause: true,
  notify: ['https://hooks.example/a', 'ntfy://ntfy.sh/navi'],
};

describe('the loop request', () => {
  it('names every option navi loop has a flag for', () => {
    const loopFlags = new Set(flagsOf('loop').concat(globalFlags()).flatMap((f) => spellings(f)));
    const missing = LOOP_OPTION_KEYS.filter((k) => !loopFlags.has(`--${k.replace(/_/g, '-')}`));
    expect(missing).toEqual([]);
  });

  it('a new job: loopArgv → navi loop flags → loopRequestOf gives the options back', () => {
    const argv = loopArgv({ task: 'tasks/fix.yaml', repo: '/r', loop: EVERY_OPTION }, null);
    expect(argv.slice(0, 2)).toEqual(['loop', 'tasks/fix.yaml']);
    expect(loopRequestOf(parseLoop(argv.slice(2)))).toEqual(EVERY_OPTION);
  });

  it('a resumed job drops the settings a resume keeps, and its deadline', () => {
    const argv = loopArgv({ task: 'tasks/fix.yaml', repo: '/r', loop: EVERY_OPTION }, 'run_1');
    expect(argv.slice(0, 3)).toEqual(['loop', '--resume', 'run_1']);
    const back = loopRequestOf(parseLoop(argv.slice(3)));
    for (const key of [...NEW_RUN_ONLY, 'deadline'] as const) expect(back[key]).toBeUndefined();
    expect(back).toMatchObject({ model: 'qwen3:8b', sandbox: 'read-only', max_tokens: 90_000, notify: EVERY_OPTION.notify });
  });

  it('POST /runs bodies and jobs validate against one schema; unknown keys are refused', () => {
    expect(LoopRequestSchema.safeParse({ task: 'x', ...EVERY_OPTION }).success).toBe(true);
    expect(LoopRequestSchema.safeParse({ task: 'x', sandbox: 'none' }).success).toBe(false);
    expect(LoopRequestSchema.safeParse({ task: 'x', approvals: 'none' }).success).toBe(false);
    expect(LoopRequestSchema.safeParse({ task: '  ' }).success).toBe(false);
  });

  it("POST /runs cannot set what stays the server operator's: the sandbox, notify targets, decisions files", () => {
    expect(startRunBody.safeParse({ task: 'x', approval: 'none', max_iterations: 3 }).success).toBe(true);
    for (const key of ['sandbox', 'notify', 'decisions'] as const) {
      expect(startRunBody.safeParse({ task: 'x', [key]: EVERY_OPTION[key] }).success, key).toBe(false);
    }
  });
});
