/** `navi queue add|list|cancel` and `navi worker`: loop runs as jobs on PostgreSQL (issue 21). */
import { commandFlags } from '../flags.js';
import { commandHelp } from '../help-layout.js';
import { handledBy, subcommandsOnly, type NaviCommand } from './invocation.js';

const add: NaviCommand = {
  command: 'add <task>',
  describe: 'Enqueue a loop run of a task (a file in the repository, a task name or a prompt); prints the job id',
  builder: (y) =>
    commandHelp(
      commandFlags(y.positional('task', { type: 'string', demandOption: true, describe: 'A task file (relative to the repository), a task name, or a prompt in quotes' }), 'queue add'),
      {
        path: 'queue add',
        uses: ['db', 'ollama', 'profile'],
        examples: [
          ['navi queue add tasks/fix.yaml --repo ~/code/app --max-iterations 8', 'one job'],
          ['navi queue add tasks/nightly.yaml --repo git@host:team/app.git --cron "0 2 * * *"', 'every night at 02:00 UTC'],
          ['navi queue add "make npm test pass" --priority 5 -o json', 'the id as JSON'],
        ],
      },
    ),
  handler: handledBy('queue add'),
};

const list: NaviCommand = {
  command: 'list',
  describe: 'List jobs (newest first) and schedules: status, attempts, worker, run id',
  builder: (y) => commandHelp(commandFlags(y, 'queue list'), { path: 'queue list', uses: ['db'], examples: [['navi queue list', ''], ['navi queue list -o json', 'as JSON']] }),
  handler: handledBy('queue list'),
};

const cancel: NaviCommand = {
  command: 'cancel <id>',
  describe: "Cancel a job (a running one's loop stops at a safe point, saved) or remove a schedule",
  builder: (y) =>
    commandHelp(y.positional('id', { type: 'string', demandOption: true, describe: 'The job or schedule id (see: navi queue list)' }), {
      path: 'queue cancel',
      uses: ['db'],
      examples: [['navi queue cancel 0b6c…', '']],
    }),
  handler: handledBy('queue cancel'),
};

export const queueModule: NaviCommand = {
  command: 'queue',
  describe: 'Loop runs as jobs for workers on PostgreSQL: add, list, cancel',
  builder: (y) =>
    commandHelp(y, { path: 'queue', uses: ['db'], examples: [['navi queue add tasks/fix.yaml --repo ~/code/app', ''], ['navi queue list', '']] })
      .command(add)
      .command(list)
      .command(cancel)
      .demandCommand(1, 'name a queue subcommand: add, list, cancel'),
  handler: subcommandsOnly,
};

export const workerModule: NaviCommand = {
  command: 'worker',
  describe: 'Take queued loop jobs until SIGINT/SIGTERM, each in its own git worktree (PostgreSQL)',
  builder: (y) =>
    commandHelp(commandFlags(y, 'worker'), {
      path: 'worker',
      uses: ['db', 'ollama'],
      examples: [
        ['navi worker --concurrency 2', 'two loops at once'],
        ['OLLAMA_HOST=http://gpu2:11434 navi worker', "this machine's Ollama"],
      ],
    }),
  handler: handledBy('worker'),
};
