/** `navi db migrate`: database maintenance. */
import { commandHelp } from '../help-layout.js';
import { handledBy, subcommandsOnly, type NaviCommand } from './invocation.js';

const migrate: NaviCommand = {
  command: 'migrate',
  describe: 'Apply migrations now (they also run on first use)',
  builder: (y) =>
    commandHelp(y, {
      path: 'db migrate',
      uses: ['db'],
      examples: [
        ['navi db migrate', 'the embedded store'],
        ['navi db migrate --db postgres://user@host/navi', 'a PostgreSQL database'],
      ],
    }),
  handler: handledBy('db migrate'),
};

export const dbModule: NaviCommand = {
  command: 'db',
  describe: 'Database maintenance',
  builder: (y) =>
    commandHelp(y, { path: 'db', uses: ['db'], examples: [['navi db migrate', '']] })
      .command(migrate)
      .demandCommand(1, 'name a db subcommand: migrate'),
  handler: subcommandsOnly,
};
