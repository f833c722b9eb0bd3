/**
 * What a command module's handler gets besides its flags: the host the invocation runs in, the
 * commands that carry out what was parsed, and where the exit code goes. yargs hands a handler
 * nothing but argv, so `main` passes these in yargs' parse context
 * (`parseAsync(args, invocationContext(…))`), which yargs merges into argv; a symbol key, so no
 * flag can collide with it and `strict()` never sees it. The modules name their command and
 * import no implementation: the bin passes the real ones (handlers.ts), a test that only parses
 * passes stand-ins that record what would have run, so it can never open a database or call a
 * model — and reaches neither through what it imports.
 */
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import type { GlobalArgs } from '../global-args.js';
import type { CliHost } from '../host.js';

/** The flags a command's handler receives, as yargs parsed them (camelCase, positionals included). */
export type NaviArgv = GlobalArgs & Record<string, unknown>;

/** A command's implementation (src/cli/commands/*.ts): its exit code. */
export type CommandHandler = (argv: NaviArgv, host: CliHost) => Promise<number>;

/** Every command that runs something, as typed after `navi`. handlers.ts has an implementation for each. */
export type CommandName =
  | 'run'
  | 'loop'
  | 'tasks list'
  | 'tasks show'
  | 'tasks validate'
  | 'runs list'
  | 'runs show'
  | 'queue add'
  | 'queue list'
  | 'queue cancel'
  | 'worker'
  | 'sessions list'
  | 'sessions show'
  | 'sessions rm'
  | 'sessions compact'
  | 'profiles list'
  | 'profiles show'
  | 'memory list'
  | 'memory forget'
  | 'mcp list'
  | 'mcp tools'
  | 'db migrate'
  | 'completion'
  | 'serve'
  | 'doctor'
  | 'init';

/** How the command a parse chose is carried out: the bin's implementations, or a test's stand-ins. */
export interface Commands {
  /** `navi run` as its fast path parsed it, without yargs (fast-run.ts). */
  runFast(argv: NaviArgv, host: CliHost): Promise<number>;
  /** `command` with the flags yargs parsed. */
  run(command: CommandName, argv: NaviArgv, host: CliHost): Promise<number>;
}

/** One command as yargs takes it (`.command(mod)`): a gemini-cli style command module. */
export type NaviCommand = CommandModule<GlobalArgs, GlobalArgs>;

/** A command's builder: its positionals, flags and help on the yargs instance it is given. */
export type Builder = (y: Argv<GlobalArgs>) => Argv<GlobalArgs>;

/** One parse's host, commands and exit code. */
export interface Invocation {
  host: CliHost;
  commands: Commands;
  /** The exit code of the command that ran (0 when none did: help, a bare `navi`). */
  code: number;
}

/** Where an invocation travels inside argv. */
export const INVOCATION: unique symbol = Symbol('navi.invocation');

/** yargs' parse context carrying `invocation` to the handler that runs. */
export function invocationContext(invocation: Invocation): { [INVOCATION]: Invocation } {
  return { [INVOCATION]: invocation };
}

/**
 * The handler of `command` for yargs: the invocation's commands run it with argv (without the
 * invocation) and the host, and its exit code is recorded. The bin's implementations are
 * imported only when one runs (start-up time: `--help` and light commands load no database or
 * model code).
 */
export function handledBy(command: CommandName): (argv: ArgumentsCamelCase<GlobalArgs>) => Promise<void> {
  return async (argv) => {
    const { [INVOCATION]: invocation, ...flags } = argv as ArgumentsCamelCase<GlobalArgs> & { [INVOCATION]?: Invocation };
    if (invocation === undefined) throw new Error(`navi ${command} ran without an invocation: parse with invocationContext(…)`);
    invocation.code = await invocation.commands.run(command, flags, invocation.host);
  };
}

/** The handler of a command that only groups subcommands: `demandCommand` sees that one runs. */
export function subcommandsOnly(): void {
  // Nothing: the subcommand's own handler ran.
}
