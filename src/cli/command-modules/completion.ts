/** `navi completion [shell]`: a static shell completion script (completion-script.ts). */
import { commandHelp } from '../help-layout.js';
import { handledBy, type NaviCommand } from './invocation.js';

export const completionModule: NaviCommand = {
  command: 'completion [shell]',
  describe: 'Print a shell completion script: bash or zsh (default: from $SHELL)',
  builder: (y) =>
    commandHelp(y.positional('shell', { choices: ['bash', 'zsh'] as const, describe: 'Shell to complete for' }), {
      path: 'completion',
      uses: [],
      examples: [
        ['source <(navi completion bash)', 'in ~/.bashrc'],
        ['source <(navi completion zsh)', 'in ~/.zshrc'],
      ],
    }),
  handler: handledBy('completion'),
};
