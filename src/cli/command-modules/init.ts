/** `navi init`: starter files in the working directory. */
import { commandHelp } from '../help-layout.js';
import { handledBy, type NaviCommand } from './invocation.js';

export const initModule: NaviCommand = {
  command: 'init',
  describe: 'Write a starter .nav-config.json, profiles/ and tasks/ here (never overwrites)',
  builder: (y) =>
    commandHelp(y, {
      path: 'init',
      uses: [],
      examples: [
        ['navi init', ''],
        ['navi init --cwd ~/code/project', 'in another directory'],
      ],
    }),
  handler: handledBy('init'),
};
