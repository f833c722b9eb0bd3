/** `navi runs list|show`: loop runs in the database. */
import { commandFlags } from '../flags.js';
import { commandHelp } from '../help-layout.js';
import { handledBy, subcommandsOnly, type NaviCommand } from './invocation.js';

const list: NaviCommand = {
  command: 'list',
  describe: 'List loop runs, newest first',
  builder: (y) =>
    commandHelp(commandFlags(y, 'runs list'), {
      path: 'runs list',
      uses: ['db'],
      examples: [['navi runs list --limit 5', ''], ['navi runs list -o json', 'as JSON']],
    }),
  handler: handledBy('runs list'),
};

const show: NaviCommand = {
  command: 'show <id>',
  describe: 'Show a run: status, counters, budgets, and every iteration (status block, gate, decisions)',
  builder: (y) =>
    commandHelp(commandFlags(y.positional('id', { type: 'string', demandOption: true, describe: 'The run id (see: navi runs list)' }), 'runs show'), {
      path: 'runs show',
      uses: ['db'],
      examples: [
        ['navi runs show run_mikq3x2a0_7hq2', 'while the loop runs, or after'],
        ['navi runs show run_mikq3x2a0_7hq2 -o json', 'as JSON'],
        ['navi runs show run_mikq3x2a0_7hq2 --format junit > junit.xml', 'a JUnit report for CI'],
      ],
    }),
  handler: handledBy('runs show'),
};

export const runsModule: NaviCommand = {
  command: 'runs',
  describe: 'Loop runs: list them, show one with its iterations',
  builder: (y) =>
    commandHelp(y, { path: 'runs', uses: ['db'], examples: [['navi runs list', ''], ['navi runs show RUN_ID', '']] })
      .command(list)
      .command(show)
      .demandCommand(1, 'name a runs subcommand: list, show'),
  handler: subcommandsOnly,
};
