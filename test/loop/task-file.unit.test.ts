import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { costGrowth } from '../support/cost-growth.js';
import { loadConfig } from '../../src/config/load.js';
import { InvalidInputError } from '../../src/errors.js';
import {
  DEFAULT_CHECK_TIMEOUT_S,
  MAX_TASK_FILE_BYTES,
  TaskFileError,
  loadTaskFile,
  parseTaskText,
  promptOnlyTask,
  taskLoopOverride,
  validateTaskFile,
} from '../../src/loop/task-file.js';
import { scratch, thrown, type Scratch } from '../config/helpers.js';

const SHIPPED = join(import.meta.dirname, '..', '..', 'tasks');

/** The problems of `text` as printed lines. */
function problems(text: string): string[] {
  const r = parseTaskText(text, { display: 'tasks/t.yaml' });
  return r.problems.map((p) => `${p.line ?? '-'}:${p.column ?? '-'} ${p.path}: ${p.message}`);
}

describe('shipped tasks', () => {
  const files = readdirSync(SHIPPED).filter((f) => f.endsWith('.yaml'));
  it('there are some', () => {
    expect(files.length).toBeGreaterThan(0);
  });
  it.each(files)('tasks/%s is valid', (file) => {
    const r = validateTaskFile(join(SHIPPED, file), `tasks/${file}`);
    expect(r.problems).toEqual([]);
    expect(r.task?.checks.length).toBeGreaterThan(0);
  });
});

describe('parseTaskText: valid', () => {
  it('fills defaults: name from the file, loop mode on, no checks', () => {
    const r = parseTaskText('prompt: Fix it\n', { display: 'tasks/fix.yaml', file: '/repo/tasks/fix.yaml' });
    expect(r.task).toEqual({
      name: 'fix',
      prompt: 'Fix it',
      source: 'tasks/fix.yaml',
      file: '/repo/tasks/fix.yaml',
      loopMode: true,
      checks: [],
    });
  });

  it('reads every key', () => {
    const text = [
      'name: fix-tests',
      'prompt: |',
      '  Make `npm test` pass.',
      'profile: coder',
      'cwd: ..',
      'loop_mode: true',
      'loop: { max_iterations: 8, never_pause_on_stagnation: true }',
      'checks:',
      '  - { name: tests, run: "npm test", timeout_s: 600 }',
      '  - { name: lint, run: "npm run lint" }',
      'ticket: { run: "gh issue view 12 --json state -q .state | grep -q CLOSED" }',
      'budget: { max_tokens: 2000000, deadline: 8h }',
    ].join('\n');
    const task = parseTaskText(text, { display: 'tasks/x.yaml', file: '/repo/tasks/x.yaml' }).task;
    expect(task).toMatchObject({
      name: 'fix-tests',
      prompt: 'Make `npm test` pass.\n',
      profile: 'coder',
      cwd: '/repo',
      loopMode: true,
      loop: { max_iterations: 8, never_pause_on_stagnation: true },
      checks: [
        { name: 'tests', run: 'npm test', timeoutS: 600 },
        { name: 'lint', run: 'npm run lint', timeoutS: DEFAULT_CHECK_TIMEOUT_S },
      ],
      ticket: { run: 'gh issue view 12 --json state -q .state | grep -q CLOSED' },
      maxTokens: 2_000_000,
      deadline: '8h',
      deadlineMs: 8 * 3_600_000,
    });
  });

  it.each([
    ['loop_mode: false', 'prompt: p\nloop_mode: false\n', false, 'loop_mode: false'],
    ['"just do this once"', 'prompt: Just do this once, bump the version\n', false, 'the prompt says "just do this once"'],
    ['default', 'prompt: p\n', true, undefined],
  ])('one-shot by %s', (_name, text, loopMode, reason) => {
    const task = parseTaskText(text, { display: 't.yaml' }).task;
    expect(task?.loopMode).toBe(loopMode);
    expect(task?.oneShotReason).toBe(reason);
  });

  it('keeps the raw loop block (no defaults filled in) for the safety guard', () => {
    const task = parseTaskText('prompt: p\nloop: { never_pause_on_stagnation: true }\n', { display: 't.yaml' }).task;
    expect(task?.loop).toEqual({ never_pause_on_stagnation: true });
  });
});

describe('parseTaskText: problems', () => {
  it('lists every problem with line, column and key', () => {
    const text = [
      'name: x',
      'promt: hi',
      'loop: { max_iterations: 50, bogus: 1 }',
      'checks:',
      '  - { name: t, run: "npm test", timeout: 5 }',
      '  - name: t',
      '    run: ""',
      'ticket: { run: 3 }',
      'budget: { deadline: 8 }',
      'profile: "../evil"',
    ].join('\n');
    expect(problems(text)).toEqual([
      '1:1 prompt: is required: must be text (the task for the model)',
      '2:1 promt: unknown key (allowed: name, prompt, profile, cwd, loop_mode, loop, checks, ticket, budget, sandbox, notify)',
      '3:9 loop.max_iterations: must be an integer between 1 and 20 (got 50)',
      '3:29 loop.bogus: unknown key (allowed: enabled, max_iterations, stagnation_threshold, exit_requires_explicit_signal, show_status_block, iteration_approval, periodic_interval, never_pause_on_stagnation, stagnation_diversify_strategy)',
      '5:33 checks[0].timeout: unknown key (allowed: name, run, timeout_s)',
      '6:5 checks[1].name: duplicate check name; each check needs its own (got "t")',
      '7:5 checks[1].run: must be a non-empty string (got "")',
      '8:11 ticket.run: must be a non-empty string (got 3)',
      '9:11 budget.deadline: must be a duration such as 90s, 30m, 8h or 1h30m (got 8)',
      '10:1 profile: must be a profile id (letters, digits, ".", "_" or "-") (got "../evil")',
    ]);
  });

  it.each([
    ['a syntax error', 'prompt: [1, 2\n', '2:1 : invalid YAML: deficient indentation'],
    ['bad indentation', 'prompt: a\n  b: c\n', '2:4 : invalid YAML: bad indentation of a mapping entry'],
    ['a duplicate key', 'prompt: a\nprompt: b\n', '2:1 : invalid YAML: duplicated mapping key'],
    ['an alias', 'prompt: &p hi\nname: *p\n', '2:8 : invalid YAML: anchors and aliases (&name / *name) are not allowed in task files'],
    ['an empty file', '', '-:- : the file is empty'],
    ['two documents', 'prompt: a\n---\nprompt: b\n', '-:- : holds more than one YAML document (---); a task file is one'],
    ['a list', '- prompt: a\n', '1:1 : must be a mapping of task keys (name, prompt, …), got a list'],
    ['a scalar', 'hello\n', '1:1 : must be a mapping of task keys (name, prompt, …), got a string'],
    ['an empty prompt', 'prompt: "  "\n', '1:1 prompt: must not be empty (got "  ")'],
    ['loop_mode as a string', 'prompt: p\nloop_mode: "yes"\n', '2:1 loop_mode: must be true or false (got "yes")'],
    ['a custom tag', 'prompt: !!js/function "f"\n', '1:9 : invalid YAML: unknown scalar tag !<tag:yaml.org,2002:js/function>'],
    ['a __proto__ key', 'prompt: p\n__proto__: { a: 1 }\n', '2:1 __proto__: unknown key (allowed: name, prompt, profile, cwd, loop_mode, loop, checks, ticket, budget, sandbox, notify)'],
  ])('%s', (_name, text, expected) => {
    expect(problems(text)).toEqual([expected]);
  });

  it('refuses an alias bomb without expanding it', async () => {
    // `levels` of nine aliases each: expanded, 9^(levels + 1) nodes.
    const name = (i: number): string => String.fromCharCode(97 + i);
    const bomb = (levels: number): string =>
      ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
        .concat(Array.from({ length: levels }, (_, i) => `${name(i + 1)}: &${name(i + 1)} [${Array(9).fill(`*${name(i)}`).join(',')}]`))
        .concat([`prompt: *${name(levels)}`])
        .join('\n');
    expect(problems(bomb(9))[0]).toMatch(/anchors and aliases .* are not allowed/);
    // Three more levels cost 729× more when expanded; refused as written, about the text's growth (~2×).
    const texts = new Map([3, 6].map((levels) => [levels, bomb(levels)]));
    const growth = await costGrowth(
      (levels) => {
        for (let i = 0; i < 100; i++) problems(texts.get(levels) ?? '');
      },
      3,
      6,
      { sameInput: false },
    );
    expect(growth.ratio, growth.text).toBeLessThan(20);
  });

  it('refuses absurd nesting', () => {
    expect(problems(`prompt: p\nloop: ${'['.repeat(50)}${']'.repeat(50)}\n`)[0]).toBe('2:22 : invalid YAML: nested deeper than 16 levels');
  });
});

describe('validateTaskFile / loadTaskFile', () => {
  let s: Scratch | undefined;
  afterEach(() => s?.cleanup());

  it('resolves cwd against the task file and checks it exists', () => {
    s = scratch();
    s.write('proj/README.md', 'x');
    const file = s.write('proj/tasks/a.yaml', 'prompt: p\ncwd: ..\n');
    expect(loadTaskFile(file, 'tasks/a.yaml').cwd).toBe(join(s.root, 'proj'));
    const bad = s.write('proj/tasks/b.yaml', 'prompt: p\ncwd: ../nowhere\n');
    expect(validateTaskFile(bad, 'tasks/b.yaml').problems).toEqual([
      { line: 2, column: 1, path: 'cwd', message: `directory not found: ${join(s.root, 'proj', 'nowhere')}` },
    ]);
  });

  it('names the file when it is missing or too large', () => {
    s = scratch();
    expect(validateTaskFile(join(s.root, 'none.yaml'), 'tasks/none.yaml').problems).toEqual([{ path: '', message: 'file not found' }]);
    const big = s.write('big.yaml', `prompt: "${'x'.repeat(MAX_TASK_FILE_BYTES)}"\n`);
    expect(validateTaskFile(big, 'tasks/big.yaml').problems[0]?.message).toMatch(/task files are limited to 1048576 bytes \(1 MB\)/);
  });

  it('throws TaskFileError (exit 2) naming the file, with every problem', () => {
    s = scratch();
    const file = s.write('t.yaml', 'prompt: p\nbogus: 1\nchecks: [{ name: a }]\n');
    const err = thrown(() => loadTaskFile(file, 'tasks/t.yaml'));
    expect(err).toBeInstanceOf(TaskFileError);
    expect(err).toBeInstanceOf(InvalidInputError);
    expect(err.exitCode).toBe(2);
    expect(err.code).toBe('task_invalid');
    expect((err as TaskFileError).problems).toEqual([
      'tasks/t.yaml:2:1: bogus: unknown key (allowed: name, prompt, profile, cwd, loop_mode, loop, checks, ticket, budget, sandbox, notify)',
      'tasks/t.yaml:3:10: checks[0].run: is required: must be a non-empty string',
    ]);
    expect(err.message).toBe(`tasks/t.yaml: 2 problems: ${(err as TaskFileError).problems.join('; ')}`);
    expect(err.message).not.toContain('\n');
  });

  it('a single problem is the whole message', () => {
    s = scratch();
    const file = s.write('t.yaml', 'prompt: p\nextra: 1\n');
    expect(thrown(() => loadTaskFile(file, 'tasks/t.yaml')).message).toBe(
      'tasks/t.yaml:2:1: extra: unknown key (allowed: name, prompt, profile, cwd, loop_mode, loop, checks, ticket, budget, sandbox, notify)',
    );
  });
});

describe('taskLoopOverride through loadConfig', () => {
  let s: Scratch | undefined;
  afterEach(() => s?.cleanup());

  it('overrides loop_mode from the config file', () => {
    s = scratch();
    s.write('.nav-config.json', { loop_mode: { max_iterations: 3, stagnation_threshold: 4 } });
    const task = parseTaskText('prompt: p\nloop: { max_iterations: 8 }\n', { display: 'tasks/t.yaml' }).task;
    const override = task && taskLoopOverride(task);
    const { config } = loadConfig({ cwd: s.root, env: {}, home: s.root, loopOverrides: override ? [override] : [] });
    expect(config.loop_mode.max_iterations).toBe(8);
    expect(config.loop_mode.stagnation_threshold).toBe(4);
  });

  it('the safety guard names the task file', () => {
    s = scratch();
    const task = parseTaskText('prompt: p\nloop: { never_pause_on_stagnation: true }\n', { display: 'tasks/t.yaml' }).task;
    const override = task && taskLoopOverride(task);
    const err = thrown(() => loadConfig({ cwd: s?.root ?? '', env: {}, home: s?.root ?? '', loopOverrides: override ? [override] : [] }));
    expect(err.message).toMatch(/^tasks\/t\.yaml: loop: never_pause_on_stagnation is true but max_iterations is not set explicitly/);
  });

  it('is undefined without a loop block', () => {
    const task = parseTaskText('prompt: p\n', { display: 't.yaml' }).task;
    expect(task && taskLoopOverride(task)).toBeUndefined();
  });
});

describe('promptOnlyTask', () => {
  it.each([
    ['Fix the failing tests in src/, then commit', { name: 'fix-the-failing-tests-in-src', loopMode: true }],
    ['Just do this once: update the changelog', { name: 'just-do-this-once-update-the', loopMode: false, oneShotReason: 'the prompt says "just do this once"' }],
    ['¿¡!', { name: 'task', loopMode: true }],
  ])('%j', (prompt, expected) => {
    expect(promptOnlyTask(prompt)).toEqual({ prompt, source: 'command line', checks: [], ...expected });
  });

  it('refuses an empty prompt with exit 2', () => {
    const err = thrown(() => promptOnlyTask('   '));
    expect(err.exitCode).toBe(2);
  });
});
