/** `navi tasks list|show|validate`: task files, read without a database or a model. */
import { commandHelp } from '../help-layout.js';
import { handledBy, subcommandsOnly, type NaviCommand } from './invocation.js';

const list: NaviCommand = {
  command: 'list',
  describe: 'List task files here and shipped examples (no database, no model)',
  builder: (y) =>
    commandHelp(y, {
      path: 'tasks list',
      uses: [],
      examples: [
        ['navi tasks list', ''],
        ['navi tasks list -o json', 'as JSON'],
      ],
    }),
  handler: handledBy('tasks list'),
};

const show: NaviCommand = {
  command: 'show <file>',
  describe: 'Show a task file as navi reads it (a path, or a name under tasks/)',
  builder: (y) =>
    commandHelp(y.positional('file', { type: 'string', demandOption: true, describe: 'A task file, or a name under tasks/ (see: navi tasks list)' }), {
      path: 'tasks show',
      uses: [],
      examples: [
        ['navi tasks show fix-failing-tests', 'a shipped example, by name'],
        ['navi tasks show tasks/fix.yaml', 'a file'],
      ],
    }),
  handler: handledBy('tasks show'),
};

const validate: NaviCommand = {
  command: 'validate [file]',
  describe: 'Validate one task file, or all under tasks/; exit 2 listing every problem',
  builder: (y) =>
    commandHelp(y.positional('file', { type: 'string', describe: 'A task file (default: every file under tasks/)' }), {
      path: 'tasks validate',
      uses: [],
      examples: [
        ['navi tasks validate', 'every file under tasks/'],
        ['navi tasks validate tasks/fix.yaml', 'one file'],
      ],
    }),
  handler: handledBy('tasks validate'),
};

export const tasksModule: NaviCommand = {
  command: 'tasks',
  describe: 'List, show and validate task files (tasks/*.yaml)',
  builder: (y) =>
    commandHelp(y, { path: 'tasks', uses: [], examples: [['navi tasks list', ''], ['navi tasks validate', '']] })
      .command(list)
      .command(show)
      .command(validate)
      .demandCommand(1, 'name a tasks subcommand: list, show, validate'),
  handler: subcommandsOnly,
};
