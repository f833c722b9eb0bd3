/**
 * The flags that make a loop request (src/loop/loop-request.ts), shared by `navi loop` and
 * `navi queue add`: one reading of them, so a job's loop is asked for as a `navi loop` is. Light
 * on purpose (types and one function): `queue add` loads it without the loop runner.
 */
import { parseDuration } from '../config/duration.js';
import { InvalidInputError } from '../errors.js';
import type { LoopOptions } from '../loop/loop-request.js';
import { SANDBOX_MODES, type SandboxMode } from '../sandbox/modes.js';
import { listFlag } from './agent-flags.js';
import type { GlobalArgs } from './global-args.js';

/** The flags of a loop request, as yargs hands them over (camelCase). */
export interface LoopFlagArgs extends GlobalArgs {
  /** `--sandbox MODE` (a global agent flag; the last one when repeated). */
  sandbox?: unknown;
  maxIterations?: number;
  approval?: 'none' | 'strict' | 'periodic';
  neverPause?: boolean;
  strategy?: 'combine' | 'radical' | 'reread';
  decisions?: string;
  maxTokens?: number;
  deadline?: string;
  iterationTimeout?: string;
  /** `--notify URL` (repeatable: a list when given more than once). */
  notify?: string | string[];
}

/** The loop request the flags make (its task aside); `--decisions -` (yargs: an empty string) is `-`. */
export function loopRequestOf(args: LoopFlagArgs): LoopOptions {
  const decisions = args.decisions === '' ? '-' : args.decisions;
  // An unknown mode stays a flag the configuration refuses (exit 2 naming it).
  const sandbox = [args.sandbox].flat().at(-1);
  return {
    ...(args.profile !== undefined ? { profile: args.profile } : {}),
    ...(args.model !== undefined ? { model: args.model } : {}),
    ...(args.maxIterations !== undefined ? { max_iterations: args.maxIterations } : {}),
    ...(args.approval !== undefined ? { approval: args.approval } : {}),
    ...(args.neverPause !== undefined ? { never_pause: args.neverPause } : {}),
    ...(args.strategy !== undefined ? { strategy: args.strategy } : {}),
    ...(args.maxTokens !== undefined ? { max_tokens: args.maxTokens } : {}),
    ...(args.deadline !== undefined ? { deadline: args.deadline } : {}),
    ...(args.iterationTimeout !== undefined ? { iteration_timeout: args.iterationTimeout } : {}),
    ...(SANDBOX_MODES.includes(sandbox as SandboxMode) ? { sandbox: sandbox as SandboxMode } : {}),
    ...(decisions !== undefined ? { decisions } : {}),
    ...(args.notify !== undefined ? { notify: listFlag(args.notify) } : {}),
  };
}

/** How the request's fields are named in messages: `navi loop`'s flags, or an API body's keys. */
export type RequestNaming = 'flags' | 'fields';

function nameOf(key: keyof LoopOptions, naming: RequestNaming): string {
  return naming === 'fields' ? key : `--${key.replace(/_/g, '-')}`;
}

/** A duration option in milliseconds (exit 2 naming the flag or field when it is not one). */
export function durationOf(req: Pick<LoopOptions, 'deadline' | 'iteration_timeout'>, key: 'deadline' | 'iteration_timeout', naming: RequestNaming): number | undefined {
  const value = req[key];
  return value === undefined ? undefined : parseDuration(value, nameOf(key, naming));
}

/** The checks of a request that need nothing opened (exit 2). */
export function checkLoopOptions(req: LoopOptions, naming: RequestNaming): void {
  for (const key of ['max_iterations', 'max_tokens'] as const) {
    const v = req[key];
    if (v !== undefined && (!Number.isInteger(v) || v < 1)) throw new InvalidInputError('flag_invalid', `${nameOf(key, naming)} must be a positive whole number (got ${String(v)})`);
  }
  durationOf(req, 'deadline', naming);
  durationOf(req, 'iteration_timeout', naming);
}
