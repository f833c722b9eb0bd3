/**
 * Command-line parsing (yargs). Each command's module is imported only when that command
 * runs, so `--help` and light commands stay fast and open no database or model client.
 */
import type { Argv } from 'yargs';
import { InvalidInputError, isNaviError } from '../errors.js';
import { PACKAGE_ROOT_URL } from '../package-root.js';
import { loopCommand, runCommand } from './commands/dispatch.js';
import type { GlobalArgs } from './global-args.js';
import { processHost, type CliHost } from './host.js';
import { reportFatal } from './fatal.js';
import { parseRunFast } from './fast-run.js';
import { commandFlags, globalFlags, withFlags } from './flags.js';
import { commandHelp, currentCommand, examplesText, helpWidth, hideTypes } from './help-layout.js';
import { exitQuietlyOnBrokenPipe, finish } from './process-exit.js';
import { runFast } from './run-entry.js';
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

function globalOptions(y: Argv): Argv<GlobalArgs> {
  return withFlags(y, globalFlags()) as unknown as Argv<GlobalArgs>;
}

type Handler = (argv: GlobalArgs & Record<string, unknown>, host: CliHost) => Promise<number>;

/** Wraps a lazily imported handler so its exit code reaches `main`. */
function lazy(load: () => Promise<Handler>, sink: { code: number; host: CliHost }): (argv: Record<string, unknown>) => Promise<void> {
  return async (argv) => {
    const handler = await load();
    sink.code = await handler(argv as GlobalArgs & Record<string, unknown>, sink.host);
  };
}

async function printVersion(): Promise<void> {
  const { readFileSync } = await import('node:fs');
  const pkg = JSON.parse(readFileSync(new URL('package.json', PACKAGE_ROOT_URL), 'utf8')) as { version: string };
  process.stdout.write(`${pkg.version}\n`);
}

export async function main(args: string[]): Promise<void> {
  const sink = { code: 0, host: processHost() };
  exitQuietlyOnBrokenPipe(process.stdout);
  exitQuietlyOnBrokenPipe(process.stderr);
  let expanded: string[];
  try {
    // `navi "prompt"` is `navi run "prompt"`; options without a command or prompt are exit 2.
    expanded = expandShorthand(args);
  } catch (err) {
    return finish(reportFatal(err));
  }
  // `navi version` (expanded to --version): main.cts answers a lone --version before loading this file.
  if (expanded.length === 1 && (expanded[0] === '--version' || expanded[0] === '-V')) {
    await printVersion();
    return finish(0);
  }
  const fast = parseRunFast(expanded);
  if (fast !== null) return finish(await runFast(fast, sink.host));
  const { default: yargs } = await import('yargs');
  const cli = globalOptions(hideTypes(yargs(expanded)))
    .scriptName('navi')
    .usage('$0 <command> [options]\n$0 "PROMPT" [options]   (= navi run "PROMPT")\n\nHeadless agent runner for local models (Ollama).')
    .command(
      'run [prompt..]',
      'One-shot: run one agent turn (full tool loop) on a prompt',
      (y) =>
        commandHelp(
          commandFlags(
            y.positional('prompt', {
              type: 'string',
              array: true,
              describe: 'The prompt (else --file, else stdin). With piped stdin too, the prompt is the instruction and stdin the material (sent after it inside <stdin>…</stdin>)',
            }),
            'run',
          ),
          {
            path: 'run',
            uses: ['db', 'ollama', 'profile'],
            examples: [
              ['navi run "list the TODOs in src/"', ''],
              ['navi "list the TODOs in src/"', 'the same: navi "…" is navi run "…"'],
              ['git diff | navi run "review this diff"', 'instruction as the argument, the diff from stdin'],
              ['git diff | navi run -o json', 'prompt from stdin, one JSON result'],
              ['navi run --output-schema answer.schema.json -o json "…" | jq .structured', 'structured answer for a script'],
              ['navi run -c "now fix the first one"', 'continue the latest session here (or -s SESSION_ID)'],
            ],
            epilog:
              'Exit codes: 0 answered; 1 error (also: the model kept writing unusable tool calls or empty replies, or an answer that does not match --output-schema); ' +
              '2 invalid input (also: an unknown session or profile, a model that is not pulled or cannot call tools); ' +
              '3 incomplete (max iterations, or the answer was cut off at the output limit; continue with -s); ' +
              '75 Ollama unreachable or stopped answering (retry later); 130 interrupted.',
          },
        ),
      lazy(() => Promise.resolve(runCommand), sink),
    )
    .command(
      'loop [task..]',
      'Loop mode: iterate on a task until evidence passes the exit gate',
      (y) =>
        commandHelp(
          commandFlags(y.positional('task', { type: 'string', array: true, describe: 'A task file (tasks/fix.yaml), a task name (see: navi tasks list), or the task as free text in quotes' }), 'loop'),
          {
            path: 'loop',
            uses: ['db', 'ollama', 'profile'],
            examples: [
              ['navi loop tasks/fix-failing-tests.yaml', 'run a task file until its checks pass and the model signals exit'],
              ['navi loop "make npm test pass" --max-iterations 8 --never-pause', 'free text; overnight-safe'],
              ['navi loop --resume run_mikq3x2a0_7hq2 --extend 3', 'continue a run that hit max iterations'],
              ['navi loop --resume run_mikq3x2a0_7hq2 --clarify "the config lives in etc/"', 'continue a run that stagnated, telling the model what it missed'],
            ],
            epilog:
              'Exit codes: 0 completed (exit gate passed), 2 invalid input (also: an unknown run id), 3 max iterations ' +
              '(resumable), 4 aborted (user or stagnation), 5 budget exhausted (resumable), 75 Ollama unavailable ' +
              '(retry later), 130 interrupted (resumable).',
          },
        ),
      lazy(() => Promise.resolve(loopCommand), sink),
    )
    .command('tasks', 'List, show and validate task files (tasks/*.yaml)', (y) =>
      commandHelp(y, { path: 'tasks', uses: [], examples: [['navi tasks list', ''], ['navi tasks validate', '']] })
        .command('list', 'List task files here and shipped examples (no database, no model)', (yy) => commandHelp(yy, { path: 'tasks list', uses: [], examples: [
          ['navi tasks list', ''],
          ['navi tasks list -o json', 'as JSON'],
        ] }), lazy(async () => (await import('./commands/tasks.js')).tasksList, sink))
        .command(
          'show <file>',
          'Show a task file as navi reads it (a path, or a name under tasks/)',
          (yy) => commandHelp(yy.positional('file', { type: 'string', demandOption: true, describe: 'A task file, or a name under tasks/ (see: navi tasks list)' }), { path: 'tasks show', uses: [], examples: [['navi tasks show fix-failing-tests', 'a shipped example, by name'], ['navi tasks show tasks/fix.yaml', 'a file']] }),
          lazy(async () => (await import('./commands/tasks.js')).tasksShow, sink),
        )
        .command(
          'validate [file]',
          'Validate one task file, or all under tasks/; exit 2 listing every problem',
          (yy) => commandHelp(yy.positional('file', { type: 'string', describe: 'A task file (default: every file under tasks/)' }), { path: 'tasks validate', uses: [], examples: [['navi tasks validate', 'every file under tasks/'], ['navi tasks validate tasks/fix.yaml', 'one file']] }),
          lazy(async () => (await import('./commands/tasks.js')).tasksValidate, sink),
        )
        .demandCommand(1, 'name a tasks subcommand: list, show, validate'),
    )
    .command('runs', 'Loop runs: list them, show one with its iterations', (y) =>
      commandHelp(y, { path: 'runs', uses: ['db'], examples: [['navi runs list', ''], ['navi runs show RUN_ID', '']] })
        .command(
          'list',
          'List loop runs, newest first',
          (yy) =>
            commandHelp(commandFlags(yy, 'runs list'), {
              path: 'runs list',
              uses: ['db'],
              examples: [['navi runs list --limit 5', ''], ['navi runs list -o json', 'as JSON']],
            }),
          lazy(async () => (await import('./commands/runs.js')).runsList, sink),
        )
        .command(
          'show <id>',
          'Show a run: status, counters, budgets, and every iteration (status block, gate, decisions)',
          (yy) =>
            commandHelp(
              commandFlags(yy.positional('id', { type: 'string', demandOption: true, describe: 'The run id (see: navi runs list)' }), 'runs show'),
              {
              path: 'runs show',
              uses: ['db'],
              examples: [['navi runs show run_mikq3x2a0_7hq2', 'while the loop runs, or after'], ['navi runs show run_mikq3x2a0_7hq2 -o json', 'as JSON'], ['navi runs show run_mikq3x2a0_7hq2 --format junit > junit.xml', 'a JUnit report for CI']],
              },
            ),
          lazy(async () => (await import('./commands/runs.js')).runsShow, sink),
        )
        .demandCommand(1, 'name a runs subcommand: list, show'),
    )
    .command('queue', 'Loop runs as jobs for workers on PostgreSQL: add, list, cancel', (y) =>
      commandHelp(y, { path: 'queue', uses: ['db'], examples: [['navi queue add tasks/fix.yaml --repo ~/code/app', ''], ['navi queue list', '']] })
        .command(
          'add <task>',
          'Enqueue a loop run of a task (a file in the repository, a task name or a prompt); prints the job id',
          (yy) =>
            commandHelp(commandFlags(yy.positional('task', { type: 'string', demandOption: true, describe: 'A task file (relative to the repository), a task name, or a prompt in quotes' }), 'queue add'), {
              path: 'queue add',
              uses: ['db', 'ollama', 'profile'],
              examples: [
                ['navi queue add tasks/fix.yaml --repo ~/code/app --max-iterations 8', 'one job'],
                ['navi queue add tasks/nightly.yaml --repo git@host:team/app.git --cron "0 2 * * *"', 'every night at 02:00 UTC'],
                ['navi queue add "make npm test pass" --priority 5 -o json', 'the id as JSON'],
              ],
            }),
          lazy(async () => (await import('./commands/queue.js')).queueAdd, sink),
        )
        .command(
          'list',
          'List jobs (newest first) and schedules: status, attempts, worker, run id',
          (yy) => commandHelp(commandFlags(yy, 'queue list'), { path: 'queue list', uses: ['db'], examples: [['navi queue list', ''], ['navi queue list -o json', 'as JSON']] }),
          lazy(async () => (await import('./commands/queue.js')).queueList, sink),
        )
        .command(
          'cancel <id>',
          "Cancel a job (a running one's loop stops at a safe point, saved) or remove a schedule",
          (yy) =>
            commandHelp(yy.positional('id', { type: 'string', demandOption: true, describe: 'The job or schedule id (see: navi queue list)' }), {
              path: 'queue cancel',
              uses: ['db'],
              examples: [['navi queue cancel 0b6c…', '']],
            }),
          lazy(async () => (await import('./commands/queue.js')).queueCancel, sink),
        )
        .demandCommand(1, 'name a queue subcommand: add, list, cancel'),
    )
    .command(
      'worker',
      'Take queued loop jobs until SIGINT/SIGTERM, each in its own git worktree (PostgreSQL)',
      (yy) =>
        commandHelp(commandFlags(yy, 'worker'), {
          path: 'worker',
          uses: ['db', 'ollama'],
          examples: [
            ['navi worker --concurrency 2', 'two loops at once'],
            ['OLLAMA_HOST=http://gpu2:11434 navi worker', "this machine's Ollama"],
          ],
        }),
      lazy(async () => (await import('./commands/worker.js')).workerCommand, sink),
    )
    .command('sessions', 'List, show, delete and compact sessions', (y) =>
      commandHelp(y, { path: 'sessions', uses: ['db', 'ollama', 'profile'], examples: [['navi sessions list', ''], ['navi sessions show SESSION_ID', '']] })
        .command(
          'list',
          'List sessions, newest first',
          (yy) =>
            commandHelp(commandFlags(yy, 'sessions list'), {
              path: 'sessions list',
              uses: ['db'],
              examples: [['navi sessions list --limit 5', ''], ['navi sessions list -o json', 'as JSON']],
            }),
          lazy(async () => (await import('./commands/sessions.js')).sessionsList, sink),
        )
        .command(
          'show <id>',
          "Show a session's messages (the display buffer)",
          (yy) => commandHelp(yy.positional('id', { type: 'string', demandOption: true, describe: 'The session id (see: navi sessions list)' }), { path: 'sessions show', uses: ['db'], examples: [['navi sessions show SESSION_ID', ''], ['navi sessions show SESSION_ID -o json', 'as JSON']] }),
          lazy(async () => (await import('./commands/sessions.js')).sessionsShow, sink),
        )
        .command(
          'rm <id>',
          'Delete a session and everything stored with it',
          (yy) => commandHelp(yy.positional('id', { type: 'string', demandOption: true, describe: 'The session id (see: navi sessions list)' }), { path: 'sessions rm', uses: ['db'], examples: [['navi sessions rm SESSION_ID', '']] }),
          lazy(async () => (await import('./commands/sessions.js')).sessionsRemove, sink),
        )
        .command(
          'compact <id>',
          "Compress a session's context now (the model summarises older messages; history is kept)",
          (yy) =>
            commandHelp(commandFlags(yy.positional('id', { type: 'string', demandOption: true, describe: 'The session id (see: navi sessions list)' }), 'sessions compact'), {
              path: 'sessions compact',
              uses: ['db', 'ollama', 'profile'],
              examples: [['navi sessions compact SESSION_ID', 'the model summarises older messages']],
            }),
          lazy(async () => (await import('./commands/compact.js')).sessionsCompact, sink),
        )
        .demandCommand(1, 'name a sessions subcommand: list, show, rm, compact'),
    )
    .command('profiles', 'List and show profiles', (y) =>
      commandHelp(y, { path: 'profiles', uses: [], examples: [['navi profiles list', ''], ['navi profiles show coder', '']] })
        .command('list', 'List profiles', (yy) => commandHelp(yy, { path: 'profiles list', uses: [], examples: [
          ['navi profiles list', ''],
          ['navi profiles list -o json', 'as JSON'],
        ] }), lazy(async () => (await import('./commands/profiles.js')).profilesList, sink))
        .command(
          'show <id>',
          "Show a profile's effective settings, tools, the project instructions found here and the system prompt",
          (yy) =>
            commandHelp(
              commandFlags(yy.positional('id', { type: 'string', demandOption: true, describe: 'The profile id (see: navi profiles list)' }), 'profiles show'),
              { path: 'profiles show', uses: [], examples: [['navi profiles show coder', 'settings, tools and the system prompt']] },
            ),
          lazy(async () => (await import('./commands/profiles.js')).profilesShow, sink),
        )
        .demandCommand(1, 'name a profiles subcommand: list, show'),
    )
    .command('memory', 'Long-term memory facts (what navi remembers about you)', (y) =>
      commandHelp(y, { path: 'memory', uses: ['db'], examples: [['navi memory list', ''], ['navi memory forget MEMORY_ID', '']] })
        .command('list', 'List remembered facts', (yy) => commandHelp(yy, { path: 'memory list', uses: ['db'], examples: [
          ['navi memory list', ''],
          ['navi memory list -o json', 'as JSON'],
        ] }), lazy(async () => (await import('./commands/memory.js')).memoryList, sink))
        .command(
          'forget <id>',
          'Forget one fact by id',
          (yy) => commandHelp(yy.positional('id', { type: 'string', demandOption: true, describe: "The fact's id (see: navi memory list)" }), { path: 'memory forget', uses: ['db'], examples: [['navi memory forget MEMORY_ID', 'ids are in: navi memory list']] }),
          lazy(async () => (await import('./commands/memory.js')).memoryForget, sink),
        )
        .demandCommand(1, 'name a memory subcommand: list, forget'),
    )
    .command('mcp', 'MCP servers: their state and the tools they offer (starts them; no database, no model)', (y) =>
      commandHelp(y, { path: 'mcp', uses: [], examples: [['navi mcp list', ''], ['navi mcp tools github', '']] })
        .command('list', 'Each configured server: transport, state, tool count, start time', (yy) => commandHelp(yy, { path: 'mcp list', uses: [], examples: [
          ['navi mcp list', 'servers from .nav-config.json, the user file and .mcp.json'],
          ['navi mcp list -o json', 'as JSON'],
        ] }), lazy(async () => (await import('./commands/mcp.js')).mcpList, sink))
        .command(
          'tools [server]',
          'The tools the servers offer, named as the model sees them (mcp__<server>__<tool>)',
          (c) => commandHelp(c.positional('server', { type: 'string', describe: 'Only this server' }), { path: 'mcp tools', uses: [], examples: [
            ['navi mcp tools', 'every server'],
            ['navi mcp tools github -o json', "one server's tools with their schemas"],
          ] }),
          lazy(async () => (await import('./commands/mcp.js')).mcpTools, sink),
        )
        .demandCommand(1, 'name an mcp subcommand: list, tools'),
    )
    .command('db', 'Database maintenance', (y) =>
      commandHelp(y, { path: 'db', uses: ['db'], examples: [['navi db migrate', '']] })
        .command('migrate', 'Apply migrations now (they also run on first use)', (yy) => commandHelp(yy, { path: 'db migrate', uses: ['db'], examples: [
          ['navi db migrate', 'the embedded store'],
          ['navi db migrate --db postgres://user@host/navi', 'a PostgreSQL database'],
        ] }), lazy(async () => (await import('./commands/db.js')).dbMigrate, sink))
        .demandCommand(1, 'name a db subcommand: migrate'),
    )
    .command(
      'completion [shell]',
      'Print a shell completion script: bash or zsh (default: from $SHELL)',
      (yy) =>
        commandHelp(yy.positional('shell', { choices: ['bash', 'zsh'] as const, describe: 'Shell to complete for' }), {
          path: 'completion',
          uses: [],
          examples: [
            ['source <(navi completion bash)', 'in ~/.bashrc'],
            ['source <(navi completion zsh)', 'in ~/.zshrc'],
          ],
        }),
      lazy(async () => (await import('./commands/completion.js')).completionCommand, sink),
    )
    .command(
      'serve',
      'Serve the REST + WebSocket API and the live page (sessions, loop runs, approvals)',
      (yy) =>
        commandHelp(commandFlags(yy, 'serve'), {
          path: 'serve',
          uses: ['db', 'ollama', 'profile'],
          examples: [
            ['navi serve', 'http://127.0.0.1:7777 (this machine only); prints the address that signs the page in'],
            ['navi serve --port 0 -o json', 'any free port; one JSON line says which, and the token file'],
            ['NAVI_SERVE_TOKEN=$(openssl rand -hex 16) navi serve --host 0.0.0.0 --allowed-host box.lan', 'reachable from other machines (plain HTTP) as box.lan'],
          ],
          epilog:
            'Always a token: --token/NAVI_SERVE_TOKEN, else one kept in navi-serve-token in the data directory. Host must be loopback, the address listened on or an --allowed-host, Origin the page\'s own (403); bodies JSON (415), 1 MB at most (413). ' +
            'API: README "Server" and GET /openapi.json. Exit codes: 2 invalid input (also: a bad token or --allowed-host, the port in use); 130 stopped by SIGINT/SIGTERM (running turns and loops saved).',
        }),
      lazy(async () => (await import('./commands/serve.js')).serveCommand, sink),
    )
    .command('doctor', 'Check config, database, Ollama, model, profiles, tools and MCP servers', (yy) => commandHelp(yy, { path: 'doctor', uses: ['db', 'ollama', 'profile'], examples: [
          ['navi doctor', ''],
          ['navi doctor -m llama3.1:8b -o json', 'another model; one JSON object'],
        ] }), lazy(async () => (await import('./commands/doctor.js')).doctorCommand, sink))
    .command('init', 'Write a starter .nav-config.json, profiles/ and tasks/ here (never overwrites)', (yy) => commandHelp(yy, { path: 'init', uses: [], examples: [
          ['navi init', ''],
          ['navi init --cwd ~/code/project', 'in another directory'],
        ] }), lazy(async () => (await import('./commands/init.js')).initCommand, sink))
    .demandCommand(1, '')
    .strict()
    .recommendCommands()
    .help()
    .alias('help', 'h')
    .version(false)
    .option('version', { alias: 'V', type: 'boolean', describe: 'Show version number' })
    .epilog(EPILOG)
    .wrap(helpWidth(process.stdout.columns, process.env))
    .fail((msg, err, y) => {
      // Our own errors (a flag value checked in a coerce) keep their code; yargs' own are usage errors.
      if (err && isNaviError(err)) throw err;
      if (err && err.name !== 'YError') throw err;
      if (!msg) {
        // `navi` alone: help on stdout, exit 0, as most CLIs do for a bare invocation.
        y.showHelp((s: string) => process.stdout.write(`${s}\n`));
        return;
      }
      // Throwing stops yargs from running the command; main() reports it with exit 2.
      throw new InvalidInputError('usage', usageMessage(msg, currentCommand()));
    });

  try {
    const argv = await cli.parseAsync();
    if (argv.version === true) await printVersion();
  } catch (err) {
    sink.code = reportFatal(err);
  }
  return finish(sink.code);
}
