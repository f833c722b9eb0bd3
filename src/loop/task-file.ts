/**
 * Task files (`tasks/*.yaml`, SPEC §6): a prompt plus how to run and verify it. Validated with
 * zod; unknown keys are errors. Every problem is collected (for `navi tasks validate`, which
 * lists them all and exits 2), each as `file:line:col: key: what is wrong`.
 *
 * YAML is parsed defensively: files over 1 MB are refused before reading, anchors/aliases are
 * refused outright (maxAliases 0: task files never need them, and an alias bomb could make
 * validation walk an exponential structure), nesting is capped, and only the core schema's
 * plain types load (no custom tags).
 */

import { statSync } from 'node:fs';
import { basename, dirname, extname, resolve } from 'node:path';
import { load, YAMLException } from 'js-yaml';
import { z } from 'zod';
import { tryParseDuration } from '../config/duration.js';
import { bool, positiveNumber, text } from '../config/fields.js';
import { lineLocator } from '../config/json-file.js';
import { problemsFrom } from '../config/issues.js';
import { readUserFile, UserFileError } from '../config/read-user-file.js';
import type { LoopOverride } from '../config/load.js';
import { TaskNotifyListSchema, type NotifyTargetConfig } from '../config/notify-schema.js';
import { BudgetSchema, LoopModeSchema, PROFILE_ID_PATTERN, SandboxFieldSchema } from '../config/schema.js';
import { InvalidInputError, printable } from '../errors.js';
import { isRecord } from '../util/guards.js';
import { markerSlug } from './markers.js';
import { isJustOnce } from './triggers.js';
import { offsetOf, yamlPathOffsets } from './yaml-positions.js';

// The prompt rules live with the phrases; re-exported so task handling has one entry point.
export { detectLoopTrigger, isJustOnce, LOOP_TRIGGER_PHRASES } from './triggers.js';

/** Largest task file read; a prompt is text, not a data set. */
export const MAX_TASK_FILE_BYTES = 1024 * 1024;

/** Deepest nesting accepted; a task file is three levels deep at most. */
const MAX_DEPTH = 16;

/** Timeout of a check that sets none: long enough for a real test suite. */
export const DEFAULT_CHECK_TIMEOUT_S = 600;

const CheckSchema = z.strictObject({
  /** Shown in the status and the digest of failing checks. */
  name: text(),
  /** Shell command; exit 0 means the check passes. */
  run: text(),
  /** Seconds before the check is stopped and counted as failing. */
  timeout_s: positiveNumber('seconds').optional(),
});

/** The task file schema (SPEC §6); strict at every level. */
export const TaskFileSchema = z.strictObject({
  name: text().optional(),
  prompt: z
    .string({ error: 'must be text (the task for the model)' })
    .refine((s) => s.trim() !== '', { error: 'must not be empty' }),
  profile: z
    .string({ error: 'must be a profile id' })
    .regex(PROFILE_ID_PATTERN, { error: 'must be a profile id (letters, digits, ".", "_" or "-")' })
    .optional(),
  cwd: text().optional(),
  loop_mode: bool().optional(),
  // Validated here so `tasks validate` lists loop problems with the rest; the raw block is what
  // overrides loop_mode (defaults must not look like explicit settings to the safety guard).
  loop: LoopModeSchema.partial().optional(),
  checks: z
    .array(CheckSchema, { error: 'must be a list of { name, run, timeout_s? }' })
    .superRefine((checks, ctx) => {
      const seen = new Set<string>();
      checks.forEach((c, i) => {
        if (seen.has(c.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: 'duplicate check name; each check needs its own' });
        seen.add(c.name);
      });
    })
    .optional(),
  ticket: z.strictObject({ run: text() }).optional(),
  budget: BudgetSchema.optional(),
  // A mode or { mode, network }; the raw value overrides the config's `sandbox` (as `loop` does loop_mode).
  sandbox: SandboxFieldSchema.optional(),
  /** Where to POST when the loop waits on a person, fails or ends (added to the config's `notify`); no `${VAR}` (issue 35). */
  notify: TaskNotifyListSchema.optional(),
});

/** A check as the runner uses it. */
export interface TaskCheck {
  /** Check name (unique within the task). */
  name: string;
  /** Shell command. */
  run: string;
  /** Seconds allowed (DEFAULT_CHECK_TIMEOUT_S when the file sets none). */
  timeoutS: number;
}

/** A loaded task. */
export interface Task {
  /** `name`, else the file name without extension, else a slug of the prompt. */
  name: string;
  /** The prompt. */
  prompt: string;
  /** Where it came from: the file as displayed, or `command line`. */
  source: string;
  /** Absolute path of the task file (absent for a prompt-only task). */
  file?: string;
  /** Profile id, when set. */
  profile?: string;
  /** Absolute working directory, when set (resolved against the task file's folder). */
  cwd?: string;
  /** Runs in loop mode (false: one-shot). */
  loopMode: boolean;
  /** Why it runs one-shot, when it does: `loop_mode: false` or `"just do this once"`. */
  oneShotReason?: string;
  /** The raw `loop` block (validated), to pass to loadConfig as a loop override. */
  loop?: Readonly<Record<string, unknown>>;
  /** The raw `sandbox` value (validated: a mode or `{ mode, network }`), above the config's. */
  sandbox?: unknown;
  /** Checks, in file order. */
  checks: TaskCheck[];
  /** Ticket command, when set. */
  ticket?: { run: string };
  /** Token budget, when set. */
  maxTokens?: number;
  /** Deadline text as written (`8h`), when set. */
  deadline?: string;
  /** Deadline in milliseconds, when set. */
  deadlineMs?: number;
  /**
   * Notify targets, when set. Never stored with the run (a URL may hold a webhook's secret):
   * a resumed run notifies the config's targets and `--notify` ones only.
   */
  notify?: NotifyTargetConfig[];
}

/** One problem in a task file. */
export interface TaskProblem {
  /** 1-based line, when known. */
  line?: number;
  /** 1-based column, when known. */
  column?: number;
  /** Dotted key (`checks[0].run`); empty for the file as a whole. */
  path: string;
  /** What is wrong. */
  message: string;
}

/** A task file failed validation: exit 2 with every problem. */
export class TaskFileError extends InvalidInputError {
  /** Each problem as one printable line, `file:line:col: key: message`. */
  readonly problems: readonly string[];

  constructor(display: string, problems: readonly TaskProblem[]) {
    const lines = formatTaskProblems(display, problems);
    const head = problems.length === 1 ? (lines[0] ?? display) : `${display}: ${problems.length} problems: ${lines.join('; ')}`;
    super('task_invalid', head);
    this.problems = lines;
  }
}

/** The result of validating a task file. */
export interface TaskValidation {
  /** The task, when there are no problems. */
  task?: Task;
  /** Every problem found. */
  problems: TaskProblem[];
}

/** Problems listed one per line; past this (a 1 MB file of stray keys holds 150 000) the rest are counted. */
export const MAX_LISTED_TASK_PROBLEMS = 100;

/**
 * `display:line:col: key: message` per problem (line and key omitted when unknown or empty), at
 * most MAX_LISTED_TASK_PROBLEMS of them, then `display: … and N more problems`. Keys, values
 * and paths come from the file: control characters in them are escaped, one problem one line.
 */
export function formatTaskProblems(display: string, problems: readonly TaskProblem[]): string[] {
  const lines = problems.slice(0, MAX_LISTED_TASK_PROBLEMS).map((p) => {
    const where = p.line === undefined ? display : `${display}:${p.line}:${p.column ?? 1}`;
    return printable(p.path === '' ? `${where}: ${p.message}` : `${where}: ${p.path}: ${p.message}`);
  });
  const more = problems.length - lines.length;
  if (more > 0) lines.push(`${printable(display)}: … and ${more} more problem${more === 1 ? '' : 's'}`);
  return lines;
}

const GOT_NOTHING = ' (got nothing)';

function yamlProblem(err: unknown): TaskProblem {
  if (!(err instanceof YAMLException)) {
    return { path: '', message: `invalid YAML: ${err instanceof Error ? err.message : String(err)}` };
  }
  let reason = err.reason;
  if (/maxAliases/.test(reason)) reason = 'anchors and aliases (&name / *name) are not allowed in task files';
  else if (/maxDepth/.test(reason)) reason = `nested deeper than ${MAX_DEPTH} levels`;
  else if (/input is empty/.test(reason)) reason = 'the file is empty';
  else if (/single document/.test(reason)) reason = 'holds more than one YAML document (---); a task file is one';
  const mark = err.mark;
  return mark
    ? { line: mark.line + 1, column: mark.column + 1, path: '', message: `invalid YAML: ${reason}` }
    : { path: '', message: reason === err.reason ? `invalid YAML: ${reason}` : reason };
}

/** Options of parseTaskText. */
export interface ParseTaskOptions {
  /** How the file is named in messages (`tasks/fix.yaml`). */
  display: string;
  /** Absolute path of the file: the base of `cwd` and the default name. */
  file?: string;
}

/** Validates task-file text; never throws for bad input. */
export function parseTaskText(source: string, opts: ParseTaskOptions): TaskValidation {
  const body = source.charCodeAt(0) === 0xfeff ? source.slice(1) : source;
  let raw: unknown;
  try {
    raw = load(body, { filename: opts.display, maxAliases: 0, maxDepth: MAX_DEPTH });
  } catch (err) {
    return { problems: [yamlProblem(err)] };
  }
  if (!isRecord(raw)) {
    const got = raw === null ? 'nothing' : Array.isArray(raw) ? 'a list' : `a ${typeof raw}`;
    return { problems: [{ line: 1, column: 1, path: '', message: `must be a mapping of task keys (name, prompt, …), got ${got}` }] };
  }
  const result = TaskFileSchema.safeParse(raw);
  if (!result.success) {
    const offsets = yamlPathOffsets(body, MAX_DEPTH);
    const locate = lineLocator(body);
    const problems = problemsFrom(result.error.issues, raw, TaskFileSchema).map((p): TaskProblem => {
      const { line, column } = locate(offsetOf(offsets, p.path));
      // problemsFrom says "(got nothing)" for a missing key; say it is missing first.
      const missing = p.text.endsWith(GOT_NOTHING);
      let message = missing ? `is required: ${p.text.slice(0, -GOT_NOTHING.length)}` : p.text;
      // problemsFrom cannot see through the checks list to name the allowed keys; do it here.
      if (message === 'unknown key' && /^checks\[\d+\]\.[^.]+$/.test(p.path)) {
        message = `unknown key (allowed: ${Object.keys(CheckSchema.shape).join(', ')})`;
      }
      return { line, column, path: p.path, message };
    });
    // In reading order, as an editor would walk them.
    problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
    return { problems };
  }
  const t = result.data;
  const fileName = opts.file === undefined ? undefined : basename(opts.file, extname(opts.file));
  const justOnce = isJustOnce(t.prompt);
  const loopMode = (t.loop_mode ?? true) && !justOnce;
  const oneShotReason = t.loop_mode === false ? 'loop_mode: false' : justOnce ? 'the prompt says "just do this once"' : undefined;
  const task: Task = {
    name: t.name ?? fileName ?? slugFromPrompt(t.prompt),
    prompt: t.prompt,
    source: opts.display,
    loopMode,
    checks: (t.checks ?? []).map((c) => ({ name: c.name, run: c.run, timeoutS: c.timeout_s ?? DEFAULT_CHECK_TIMEOUT_S })),
  };
  if (opts.file !== undefined) task.file = opts.file;
  if (oneShotReason !== undefined) task.oneShotReason = oneShotReason;
  if (t.profile !== undefined) task.profile = t.profile;
  if (t.cwd !== undefined) task.cwd = resolve(opts.file === undefined ? '.' : dirname(opts.file), t.cwd);
  if (isRecord(raw.loop)) task.loop = { ...raw.loop };
  if (raw.sandbox !== undefined) task.sandbox = isRecord(raw.sandbox) ? { ...raw.sandbox } : raw.sandbox;
  if (t.ticket !== undefined) task.ticket = { run: t.ticket.run };
  if (t.notify !== undefined && t.notify.length > 0) task.notify = t.notify;
  if (t.budget?.max_tokens !== undefined) task.maxTokens = t.budget.max_tokens;
  if (t.budget?.deadline !== undefined) {
    task.deadline = t.budget.deadline;
    task.deadlineMs = tryParseDuration(t.budget.deadline);
  }
  return { task, problems: [] };
}

/**
 * Reads and validates a task file: size cap, YAML, schema, and that `cwd` is a directory.
 * `display` is how the file is named in messages (default: the path as given).
 */
export function validateTaskFile(path: string, display = path): TaskValidation {
  const file = resolve(path);
  let source: string;
  try {
    // A regular file of at most 1 MB, refused before it is read otherwise (a FIFO would hang
    // navi, a symlink to /dev/zero would fill its memory).
    source = readUserFile(file, { display, code: 'task_invalid', maxBytes: MAX_TASK_FILE_BYTES, kind: 'task files' });
  } catch (err) {
    if (!(err instanceof UserFileError)) throw err;
    return { problems: [{ path: '', message: err.fsCode === 'EISDIR' ? 'is a directory, not a task file' : err.reason }] };
  }
  const result = parseTaskText(source, { display, file });
  const cwd = result.task?.cwd;
  if (cwd !== undefined && !isDirectory(cwd)) {
    const offsets = yamlPathOffsets(source, MAX_DEPTH);
    const { line, column } = lineLocator(source)(offsetOf(offsets, 'cwd'));
    return { problems: [{ line, column, path: 'cwd', message: `directory not found: ${cwd}` }] };
  }
  return result;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Loads a task file; throws TaskFileError (`task_invalid`, exit 2) listing every problem. */
export function loadTaskFile(path: string, display = path): Task {
  const result = validateTaskFile(path, display);
  if (result.task === undefined || result.problems.length > 0) throw new TaskFileError(display, result.problems);
  return result.task;
}

/** The task's `loop` block as a loadConfig loop override, or undefined when it has none. */
export function taskLoopOverride(task: Task): LoopOverride | undefined {
  return task.loop === undefined ? undefined : { source: task.source, key: 'loop', values: task.loop };
}

/** The task's `sandbox` as a loadConfig override of the config's, or undefined when it sets none. */
export function taskSandboxOverride(task: Task): LoopOverride | undefined {
  return task.sandbox === undefined ? undefined : { source: task.source, key: 'sandbox', values: task.sandbox, target: 'sandbox' };
}

/** Words of a prompt used for a prompt-only task's name (and so its marker file name). */
const NAME_WORDS = 6;

function slugFromPrompt(prompt: string): string {
  const words = prompt.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  return markerSlug(words.slice(0, NAME_WORDS).join('-'));
}

/** `navi loop "free text"`: a task with only a prompt (one-shot when it says "just do this once"). */
export function promptOnlyTask(prompt: string): Task {
  if (prompt.trim() === '') throw new InvalidInputError('task_invalid', 'navi loop: the prompt is empty; give a task file or a prompt');
  const justOnce = isJustOnce(prompt);
  const task: Task = { name: slugFromPrompt(prompt), prompt, source: 'command line', loopMode: !justOnce, checks: [] };
  if (justOnce) task.oneShotReason = 'the prompt says "just do this once"';
  return task;
}
