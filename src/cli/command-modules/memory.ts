/** `navi memory list|forget`: long-term memory facts. */
import { commandHelp } from '../help-layout.js';
import { handledBy, subcommandsOnly, type NaviCommand } from './invocation.js';

const list: NaviCommand = {
  command: 'list',
  describe: 'List remembered facts',
  builder: (y) =>
    commandHelp(y, {
      path: 'memory list',
      uses: ['db'],
      examples: [
        ['navi memory list', ''],
        ['navi memory list -o json', 'as JSON'],
      ],
    }),
  handler: handledBy('memory list'),
};

const forget: NaviCommand = {
  command: 'forget <id>',
  describe: 'Forget one fact by id',
  builder: (y) =>
    commandHelp(y.positional('id', { type: 'string', demandOption: true, describe: "The fact's id (see: navi memory list)" }), {
      path: 'memory forget',
      uses: ['db'],
      examples: [['navi memory forget MEMORY_ID', 'ids are in: navi memory list']],
    }),
  handler: handledBy('memory forget'),
};

export const memoryModule: NaviCommand = {
  command: 'memory',
  describe: 'Long-term memory facts (what navi remembers about you)',
  builder: (y) =>
    commandHelp(y, { path: 'memory', uses: ['db'], examples: [['navi memory list', ''], ['navi memory forget MEMORY_ID', '']] })
      .command(list)
      .command(forget)
      .demandCommand(1, 'name a memory subcommand: list, forget'),
  handler: subcommandsOnly,
};
