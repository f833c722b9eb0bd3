/** `navi profiles list|show`: profiles as navi resolves them here (no database, no model). */
import { commandFlags } from '../flags.js';
import { commandHelp } from '../help-layout.js';
import { handledBy, subcommandsOnly, type NaviCommand } from './invocation.js';

const list: NaviCommand = {
  command: 'list',
  describe: 'List profiles',
  builder: (y) =>
    commandHelp(y, {
      path: 'profiles list',
      uses: [],
      examples: [
        ['navi profiles list', ''],
        ['navi profiles list -o json', 'as JSON'],
      ],
    }),
  handler: handledBy('profiles list'),
};

const show: NaviCommand = {
  command: 'show <id>',
  describe: "Show a profile's effective settings, tools, the project instructions found here and the system prompt",
  builder: (y) =>
    commandHelp(commandFlags(y.positional('id', { type: 'string', demandOption: true, describe: 'The profile id (see: navi profiles list)' }), 'profiles show'), {
      path: 'profiles show',
      uses: [],
      examples: [['navi profiles show coder', 'settings, tools and the system prompt']],
    }),
  handler: handledBy('profiles show'),
};

export const profilesModule: NaviCommand = {
  command: 'profiles',
  describe: 'List and show profiles',
  builder: (y) =>
    commandHelp(y, { path: 'profiles', uses: [], examples: [['navi profiles list', ''], ['navi profiles show coder', '']] })
      .command(list)
      .command(show)
      .demandCommand(1, 'name a profiles subcommand: list, show'),
  handler: subcommandsOnly,
};
