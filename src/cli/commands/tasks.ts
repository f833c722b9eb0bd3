/**
 * `navi tasks list|show|validate [file]` (SPEC §3, §6): the task files under `tasks/` of the
 * working directory (and the examples shipped with navi). No database, no model: these only
 * read YAML. `validate` lists every problem of every file and exits 2 when there is one.
 */
import type { CliHost } from '../host.js';
import { resolve } from 'node:path';
import { EXIT } from '../../errors.js';
import { formatTaskProblems, validateTaskFile, type Task, type TaskValidation } from '../../loop/task-file.js';
import type { GlobalArgs } from '../global-args.js';
import { resolveCwd } from '../setup.js';
import { findTaskFile, taskFiles, taskNotFound, type TaskFileEntry } from '../task-lookup.js';

type Args = GlobalArgs & Record<string, unknown>;

function printJson(stdout: CliHost['stdout'], value: unknown): void {
  stdout.write(`${JSON.stringify(value)}\n`);
}

/** A task as JSON (snake_case, as users write it). */
function taskJson(t: Task): Record<string, unknown> {
  return {
    name: t.name,
    prompt: t.prompt,
    file: t.file ?? null,
    profile: t.profile ?? null,
    cwd: t.cwd ?? null,
    loop_mode: t.loopMode,
    ...(t.oneShotReason !== undefined ? { one_shot_reason: t.oneShotReason } : {}),
    loop: t.loop ?? null,
    checks: t.checks.map((c) => ({ name: c.name, run: c.run, timeout_s: c.timeoutS })),
    ticket: t.ticket ?? null,
    budget: { max_tokens: t.maxTokens ?? null, deadline: t.deadline ?? null },
  };
}

export function tasksList(argv: Args, host: CliHost): Promise<number> {
  return Promise.resolve(syncTasksList(argv, host));
}

function syncTasksList(argv: Args, host: CliHost): number {
  const cwd = resolveCwd(argv.cwd, host.cwd);
  const entries = taskFiles(cwd, true).map((e) => ({ ...e, result: validateTaskFile(e.path, e.display) }));
  if (argv.output !== 'text') {
    printJson(host.stdout, {
      tasks: entries.map((e) => ({
        file: e.display,
        source: e.source,
        valid: e.result.task !== undefined,
        ...(e.result.task !== undefined ? { name: e.result.task.name, loop_mode: e.result.task.loopMode, checks: e.result.task.checks.map((c) => c.name) } : {}),
        problems: formatTaskProblems(e.display, e.result.problems),
      })),
    });
    return 0;
  }
  if (entries.length === 0) {
    host.stdout.write('no task files in tasks/; create one with: navi init\n');
    return 0;
  }
  const width = Math.max(...entries.map((e) => (e.result.task?.name ?? '').length), 4);
  const fileWidth = Math.max(...entries.map((e) => e.display.length), 4);
  for (const e of entries) {
    const t = e.result.task;
    const name = (t?.name ?? '(invalid)').padEnd(width);
    const what = t === undefined ? `invalid: ${e.result.problems.length} problem(s); see: navi tasks validate ${e.display}` : `${t.loopMode ? 'loop    ' : 'one-shot'}  ${t.checks.length} check(s)`;
    host.stdout.write(`${name}  ${e.display.padEnd(fileWidth)}  ${e.source.padEnd(7)}  ${what}\n`);
  }
  host.stdout.write('\nRun one with: navi loop FILE   Details: navi tasks show FILE\n');
  return 0;
}

/** A task file named by path (`.yaml` may be left off), or by name under `tasks/` (project, then shipped). */
function findTask(ref: string, cwd: string): TaskFileEntry {
  const found = findTaskFile(ref, cwd);
  if (found === null) throw taskNotFound(ref, cwd);
  return found;
}

export function tasksShow(argv: Args, host: CliHost): Promise<number> {
  return Promise.resolve(syncTasksShow(argv, host));
}

function syncTasksShow(argv: Args, host: CliHost): number {
  const cwd = resolveCwd(argv.cwd, host.cwd);
  const entry = findTask(String(argv.file), cwd);
  const result = validateTaskFile(entry.path, entry.display);
  if (result.task === undefined) return reportProblems(host, [{ display: entry.display, result }], argv.output !== 'text');
  const t = result.task;
  if (argv.output !== 'text') {
    printJson(host.stdout, { task: taskJson(t), source: entry.source });
    return 0;
  }
  const lines = [
    `task ${t.name} (${entry.display}, ${entry.source})`,
    `mode: ${t.loopMode ? 'loop' : `one-shot (${t.oneShotReason ?? ''})`}`,
    `profile: ${t.profile ?? '(default)'}`,
    `cwd: ${t.cwd ?? '(where navi runs)'}`,
  ];
  if (t.loop !== undefined) lines.push(`loop: ${JSON.stringify(t.loop)}`);
  lines.push(`checks: ${t.checks.length === 0 ? '(none: the agent\'s own test runs count)' : ''}`);
  for (const c of t.checks) lines.push(`  - ${c.name}: ${c.run} (timeout ${c.timeoutS} s)`);
  if (t.ticket !== undefined) lines.push(`ticket: ${t.ticket.run}`);
  if (t.maxTokens !== undefined || t.deadline !== undefined) lines.push(`budget: max_tokens ${t.maxTokens ?? '-'}, deadline ${t.deadline ?? '-'}`);
  lines.push('', 'prompt:', t.prompt.trimEnd());
  host.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

function reportProblems(host: CliHost, files: Array<{ display: string; result: TaskValidation }>, json: boolean): number {
  const bad = files.filter((f) => f.result.problems.length > 0);
  if (json) {
    printJson(host.stdout, { files: files.map((f) => ({ file: f.display, valid: f.result.problems.length === 0, problems: formatTaskProblems(f.display, f.result.problems) })) });
  } else {
    for (const f of files) {
      if (f.result.problems.length === 0) host.stdout.write(`ok  ${f.display}\n`);
      for (const line of formatTaskProblems(f.display, f.result.problems)) host.stdout.write(`${line}\n`);
    }
  }
  if (bad.length === 0) return 0;
  const count = bad.reduce((n, f) => n + f.result.problems.length, 0);
  host.stderr.write(`navi: ${count} problem${count === 1 ? '' : 's'} in ${bad.length} task file${bad.length === 1 ? '' : 's'}\n`);
  return EXIT.invalid_input;
}

export function tasksValidate(argv: Args, host: CliHost): Promise<number> {
  return Promise.resolve(syncTasksValidate(argv, host));
}

function syncTasksValidate(argv: Args, host: CliHost): number {
  const cwd = resolveCwd(argv.cwd, host.cwd);
  const ref = typeof argv.file === 'string' ? argv.file : undefined;
  const entries = ref !== undefined ? [{ path: resolve(cwd, ref), display: ref }] : taskFiles(cwd, false);
  if (entries.length === 0) {
    if (argv.output !== 'text') printJson(host.stdout, { files: [] });
    else host.stdout.write('no task files in tasks/ to validate\n');
    return 0;
  }
  return reportProblems(host, entries.map((e) => ({ display: e.display, result: validateTaskFile(e.path, e.display) })), argv.output !== 'text');
}
