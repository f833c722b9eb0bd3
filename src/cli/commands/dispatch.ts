/**
 * One shot or loop mode. `navi run` enters loop mode on a trigger phrase or `loop_mode.enabled`
 * (SPEC §6); `navi loop` runs one shot when its task asks for it (`loop_mode: false`, "just do
 * this once"). run.ts and loop.ts each decide and hand the other case back here instead of
 * importing each other, so this is the one place that knows both. Both stay lazily loaded: a
 * one-shot run never loads loop mode.
 */
import { settleAgentFlags } from '../agent-flags.js';
import type { GlobalArgs } from '../global-args.js';
import type { CliHost } from '../host.js';
import type { LoopArgs, LoopEntry } from './loop.js';

type Argv = GlobalArgs & Record<string, unknown>;

/** `navi run`. */
export async function runCommand(argv: Argv, host: CliHost): Promise<number> {
  const { runOneShot } = await import('./run.js');
  const next = await runOneShot(settleAgentFlags(argv, host.cwd), host);
  if (typeof next === 'number') return next;
  // A one-shot's --timeout is the loop's --deadline: the whole run's wall-clock limit.
  const deadline = typeof argv.deadline === 'string' ? argv.deadline : typeof argv.timeout === 'string' ? argv.timeout : undefined;
  return enterLoopMode({ ...argv, task: [], maxIterations: undefined, ...(deadline !== undefined ? { deadline } : {}) }, { prompt: next.prompt, autoEntered: next.autoEntered }, host, next.release);
}

/** `navi loop`. */
export async function loopCommand(argv: Argv, host: CliHost): Promise<number> {
  return enterLoopMode(settleAgentFlags(argv, host.cwd), {}, host);
}

async function enterLoopMode(args: LoopArgs, entry: LoopEntry, host: CliHost, release?: () => void): Promise<number> {
  const { runLoopMode } = await import('./loop.js');
  // Synchronous from here on: loop mode installs its own signal handlers before any await.
  release?.();
  const next = await runLoopMode(args, entry, host);
  if (typeof next === 'number') return next;
  // One shot: exactly what `navi run` does with the task's prompt, profile and directory.
  return runCommand({ ...args, prompt: [next.prompt], cwd: next.cwd, profile: next.profile, loop: false, maxIterations: undefined }, host);
}
