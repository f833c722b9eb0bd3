/**
 * `--record FILE`, `--replay FILE` and `--replay-timing` (commands that call the model: `run`,
 * `loop`, `sessions compact`): the exchange hooks handed to the Ollama client, and what the
 * command checks when it ends (a replay that did not use the whole recording fails).
 * The recording and replay modules load only when one of the flags is given.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { InvalidInputError } from '../errors.js';
import type { ExchangeHooks } from '../llm/exchange-hooks.js';
import { packagePath } from '../package-root.js';
import { createRedactor } from '../tools/redact.js';

/** The flags, as yargs hands them over. */
export interface ExchangeArgs {
  record?: string;
  replay?: string;
  replayTiming?: boolean;
}

export interface ModelExchanges {
  /** For the Ollama client; absent when neither flag is given. */
  hooks?: ExchangeHooks;
  /** Replaying: no Ollama is contacted at all. */
  replaying: boolean;
  /**
   * Call when the command's work is done, before its result: closes a recording; throws (exit 2)
   * when a replay mismatched or left recorded model calls unused.
   */
  finish(): void;
}

const NONE: ModelExchanges = { replaying: false, finish: () => undefined };

function naviVersion(): string {
  try {
    const pkg: unknown = JSON.parse(readFileSync(packagePath('package.json'), 'utf8'));
    return typeof pkg === 'object' && pkg !== null && 'version' in pkg && typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Checks the flags without touching a file (exit 2 on a bad combination). */
export function checkExchangeFlags(args: ExchangeArgs): void {
  if (args.record !== undefined && args.replay !== undefined) {
    throw new InvalidInputError('flag_invalid', '--record and --replay exclude each other: record a run against Ollama, then replay that file');
  }
  if (args.replayTiming === true && args.replay === undefined) {
    throw new InvalidInputError('flag_invalid', '--replay-timing only applies with --replay FILE');
  }
  for (const [flag, value] of [['--record', args.record], ['--replay', args.replay]] as const) {
    if (value !== undefined && value.trim() === '') throw new InvalidInputError('flag_invalid', `${flag} needs a file name`);
  }
}

/**
 * The hooks for this command. Paths are relative to `cwd` (`--cwd`, like `--file`); secrets
 * are redacted with the rules tools use, from `env`.
 */
export async function modelExchanges(args: ExchangeArgs, cwd: string, env: Record<string, string | undefined>): Promise<ModelExchanges> {
  checkExchangeFlags(args);
  if (args.record === undefined && args.replay === undefined) return NONE;
  const redact = createRedactor(env);
  if (args.record !== undefined) {
    const { createRecorder } = await import('../llm/exchange-recorder.js');
    const recorder = createRecorder({ file: resolve(cwd, args.record), shownAs: args.record, redact, naviVersion: naviVersion() });
    return { hooks: recorder.hooks, replaying: false, finish: () => recorder.close() };
  }
  const replay = args.replay as string;
  const [{ readRecording }, { createReplayer }] = await Promise.all([import('../llm/recording-read.js'), import('../llm/exchange-replayer.js')]);
  const replayer = createReplayer({ recording: readRecording(resolve(cwd, replay), replay), redact, timing: args.replayTiming === true });
  return { hooks: replayer.hooks, replaying: true, finish: () => replayer.finish() };
}
