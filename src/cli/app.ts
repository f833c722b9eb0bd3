/**
 * Command-line parsing (yargs): `main(args, host, commands)` expands the shorthand, answers
 * `--version`, takes `navi run`'s fast path, or hands the arguments to yargs with every command
 * module (command-modules/); what was chosen runs through `commands`. It reads and writes only
 * the host it is given and returns the exit code, so a test runs it in its own process
 * (test/support/in-process.ts); the bin passes the real process and the real commands
 * (`binMain`), whose implementations are imported only when one runs, so `--help` and light
 * commands stay fast and open no database or model client.
 */
import type { Argv } from 'yargs';
import { InvalidInputError, isNaviError } from '../errors.js';
import { PACKAGE_ROOT_URL } from '../package-root.js';
import { COMMAND_MODULES } from './command-modules/index.js';
import { NAVI_COMMANDS } from './command-modules/handlers.js';
import { invocationContext, type Commands, type Invocation } from './command-modules/invocation.js';
import type { GlobalArgs } from './global-args.js';
import { reportFatal } from './fatal.js';
import { parseRunFast } from './fast-run.js';
import { globalFlags, withFlags } from './flags.js';
import { currentCommand, examplesText, helpWidth, hideTypes } from './help-layout.js';
import { processHost, type CliHost } from './host.js';
import { exitQuietlyOnBrokenPipe, finish } from './process-exit.js';
import { expandShorthand } from './shorthand.js';
import { usageMessage } from './usage-error.js';

const TOP_EXAMPLES = examplesText([
  ['navi run "list the TODOs in src/"', 'one shot: the answer on stdout'],
  ['navi loop tasks/fix-failing-tests.yaml', 'iterate until the checks pass'],
  ['navi doctor', 'check config, database, Ollama and the model'],
]);

const EPILOG = `${TOP_EXAMPLES}

Exit codes: 0 success, 1 error, 2 invalid input (also: a session, run, profile,
task or memory id that does not exist), 3 incomplete, 4 aborted, 5 budget
exhausted, 75 Ollama unavailable (retry later), 130 interrupted.
Docs: README.md (output formats, event schema, config keys).`;

/** The bin's way in (main.cts, run-entry.ts): this process is the host, and its exit code ends it. */
export async function binMain(args: string[]): Promise<never> {
  exitQuietlyOnBrokenPipe(process.stdout);
  exitQuietlyOnBrokenPipe(process.stderr);
  return finish(await main(args, processHost(), NAVI_COMMANDS));
}

/** One invocation of navi in `host`, its command carried out by `commands`: the exit code (help 0, a usage error 2). */
export async function main(args: string[], host: CliHost, commands: Commands): Promise<number> {
  let expanded: string[];
  try {
    // `navi "prompt"` is `navi run "prompt"`; options without a command or prompt are exit 2.
    expanded = expandShorthand(args);
  } catch (err) {
    return reportFatal(err, host);
  }
  // `navi version` (expanded to --version): main.cts answers a lone --version before loading this file.
  if (expanded.length === 1 && (expanded[0] === '--version' || expanded[0] === '-V')) return printVersion(host);
  const fast = parseRunFast(expanded);
  if (fast !== null) return commands.runFast(fast, host);
  const { default: yargs } = await import('yargs');
  const invocation: Invocation = { host, commands, code: 0 };
  // yargs' own output (help) is handed to the callback instead of console.log: it goes to the host.
  let output = '';
  try {
    const argv = await parser(yargs(expanded, host.cwd), host).parseAsync(expanded, invocationContext(invocation), (_err, _argv, text) => {
      output = text;
    });
    if (output !== '') host.stdout.write(`${output}\n`);
    if (argv.version === true) return printVersion(host);
    return invocation.code;
  } catch (err) {
    return reportFatal(err, host);
  }
}

/** navi's yargs: the global flags, every command module, help laid out for `host`, usage errors as exit 2. */
function parser(y: Argv, host: CliHost): Argv<GlobalArgs> {
  let cli = (withFlags(hideTypes(y), globalFlags()) as unknown as Argv<GlobalArgs>)
    .scriptName('navi')
    .usage('$0 <command> [options]\n$0 "PROMPT" [options]   (= navi run "PROMPT")\n\nHeadless agent runner for local models (Ollama).');
  for (const command of COMMAND_MODULES) cli = cli.command(command);
  return cli
    .demandCommand(1, '')
    .strict()
    .recommendCommands()
    .help()
    .alias('help', 'h')
    .version(false)
    .option('version', { alias: 'V', type: 'boolean', describe: 'Show version number' })
    .epilog(EPILOG)
    // main returns the code; only the bin's binMain ends the process.
    .exitProcess(false)
    .locale(localeOf(host.env))
    .wrap(helpWidth(host.stdout.columns, host.env))
    .fail((msg, err, inner) => {
      // Our own errors (a flag value checked in a coerce) keep their code; yargs' own are usage errors.
      if (err && isNaviError(err)) throw err;
      if (err && err.name !== 'YError') throw err;
      if (!msg) {
        // `navi` alone: help on stdout, exit 0, as most CLIs do for a bare invocation.
        inner.showHelp((s: string) => host.stdout.write(`${s}\n`));
        return;
      }
      // Throwing stops yargs from running the command; main() reports it with exit 2.
      // The command whose builder ran records itself on this parse's instance (help-layout.ts).
      throw new InvalidInputError('usage', usageMessage(msg, currentCommand(y)));
    });
}

/** The language of yargs' own words ("Options:"), from the host's environment as yargs reads the process's. */
export function localeOf(env: Record<string, string | undefined>): string {
  const locale = env.LC_ALL || env.LC_MESSAGES || env.LANG || env.LANGUAGE || 'en_US';
  return locale.replace(/[.:].*/, '');
}

async function printVersion(host: CliHost): Promise<number> {
  const { readFileSync } = await import('node:fs');
  const pkg = JSON.parse(readFileSync(new URL('package.json', PACKAGE_ROOT_URL), 'utf8')) as { version: string };
  host.stdout.write(`${pkg.version}\n`);
  return 0;
}
