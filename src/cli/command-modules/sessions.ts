/** `navi sessions list|show|rm|compact`: stored sessions. */
import type { PositionalOptions } from 'yargs';
import { commandFlags } from '../flags.js';
import { commandHelp } from '../help-layout.js';
import { handledBy, subcommandsOnly, type NaviCommand } from './invocation.js';

/** The `<id>` of show, rm and compact (a new object each time: yargs keeps what it is given). */
function sessionId(): PositionalOptions {
  return { type: 'string', demandOption: true, describe: 'The session id (see: navi sessions list)' };
}

const list: NaviCommand = {
  command: 'list',
  describe: 'List sessions, newest first',
  builder: (y) =>
    commandHelp(commandFlags(y, 'sessions list'), {
      path: 'sessions list',
      uses: ['db'],
      examples: [['navi sessions list --limit 5', ''], ['navi sessions list -o json', 'as JSON']],
    }),
  handler: handledBy('sessions list'),
};

const show: NaviCommand = {
  command: 'show <id>',
  describe: "Show a session's messages (the display buffer)",
  builder: (y) =>
    commandHelp(y.positional('id', sessionId()), {
      path: 'sessions show',
      uses: ['db'],
      examples: [['navi sessions show SESSION_ID', ''], ['navi sessions show SESSION_ID -o json', 'as JSON']],
    }),
  handler: handledBy('sessions show'),
};

const rm: NaviCommand = {
  command: 'rm <id>',
  describe: 'Delete a session and everything stored with it',
  builder: (y) => commandHelp(y.positional('id', sessionId()), { path: 'sessions rm', uses: ['db'], examples: [['navi sessions rm SESSION_ID', '']] }),
  handler: handledBy('sessions rm'),
};

const compact: NaviCommand = {
  command: 'compact <id>',
  describe: "Compress a session's context now (the model summarises older messages; history is kept)",
  builder: (y) =>
    commandHelp(commandFlags(y.positional('id', sessionId()), 'sessions compact'), {
      path: 'sessions compact',
      uses: ['db', 'ollama', 'profile'],
      examples: [['navi sessions compact SESSION_ID', 'the model summarises older messages']],
    }),
  handler: handledBy('sessions compact'),
};

export const sessionsModule: NaviCommand = {
  command: 'sessions',
  describe: 'List, show, delete and compact sessions',
  builder: (y) =>
    commandHelp(y, { path: 'sessions', uses: ['db', 'ollama', 'profile'], examples: [['navi sessions list', ''], ['navi sessions show SESSION_ID', '']] })
      .command(list)
      .command(show)
      .command(rm)
      .command(compact)
      .demandCommand(1, 'name a sessions subcommand: list, show, rm, compact'),
  handler: subcommandsOnly,
};
