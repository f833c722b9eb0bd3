/**
 * What a command module's handler gets besides its flags: the host the invocation runs in, and
 * where its exit code goes. yargs hands a handler nothing but argv, so `main` passes both in
 * yargs' parse context (`parseAsync(args, { [INVOCATION]: … })`), which yargs merges into argv;
 * a symbol key, so no flag can collide with it and `strict()` never sees it. A test can run one
 * module the same way without a process: `yargs().command(mod).parseAsync(args, invocationContext(host))`.
 */
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import type { GlobalArgs } from '../global-args.js';
import type { CliHost } from '../host.js';

/** The flags a command's handler receives, as yargs parsed them (camelCase, positionals included). */
export type NaviArgv = GlobalArgs & Record<string, unknown>;

/**
 * A command's implementation (src/cli/commands/*.ts): its exit code. Handlers written before the
 * host existed take argv alone; they receive the host anyway and may use it.
 */
export type CommandHandler = (argv: NaviArgv, host: CliHost) => Promise<number>;

/** One command as yargs takes it (`.command(mod)`): a gemini-cli style command module. */
export type NaviCommand = CommandModule<GlobalArgs, GlobalArgs>;

/** A command's builder: its positionals, flags and help on the yargs instance it is given. */
export type Builder = (y: Argv<GlobalArgs>) => Argv<GlobalArgs>;

/** The command a parse chose and its flags: what a dry run is told instead of running it. */
export interface ParsedCommand {
  /** As typed after `navi`: `run`, `sessions list`. */
  command: string;
  argv: NaviArgv;
}

/** One parse's host and exit code. */
export interface Invocation {
  host: CliHost;
  /** The exit code of the handler that ran (0 when none did: help, a bare `navi`). */
  code: number;
  /**
   * Parse only (a test of parsing): the chosen command is handed here, nothing is loaded or run,
   * and its return value is the exit code. A test that only parses can then never open a
   * database or call a model, whatever the arguments turn out to mean.
   */
  dryRun?: (parsed: ParsedCommand) => number;
}

/** Where an invocation travels inside argv. */
export const INVOCATION: unique symbol = Symbol('navi.invocation');

/** yargs' parse context carrying `invocation` to the handler that runs. */
export function invocationContext(invocation: Invocation): { [INVOCATION]: Invocation } {
  return { [INVOCATION]: invocation };
}

/**
 * The handler of `command` for yargs: loads the command's implementation only when it runs
 * (start-up time: `--help` and light commands load no database or model code), hands it argv
 * without the invocation, and the host, and records its exit code.
 */
export function lazy(command: string, load: () => Promise<CommandHandler>): (argv: ArgumentsCamelCase<GlobalArgs>) => Promise<void> {
  return async (argv) => {
    const { [INVOCATION]: invocation, ...flags } = argv as ArgumentsCamelCase<GlobalArgs> & { [INVOCATION]?: Invocation };
    if (invocation === undefined) throw new Error(`navi ${command} ran without an invocation: parse with invocationContext(…)`);
    if (invocation.dryRun !== undefined) {
      invocation.code = invocation.dryRun({ command, argv: flags });
      return;
    }
    const handler = await load();
    invocation.code = await handler(flags, invocation.host);
  };
}

/** The handler of a command that only groups subcommands: `demandCommand` sees that one runs. */
export function subcommandsOnly(): void {
  // Nothing: the subcommand's own handler ran.
}
