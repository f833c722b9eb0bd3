/** `navi completion [bash|zsh]`: prints the completion script (no database, no model). */
import { InvalidInputError } from '../../errors.js';
import { completionScript } from '../completion-script.js';
import type { GlobalArgs } from '../global-args.js';

export function completionCommand(argv: GlobalArgs & Record<string, unknown>): Promise<number> {
  const asked = typeof argv.shell === 'string' ? argv.shell : undefined;
  const fromEnv = (process.env.SHELL ?? '').split('/').at(-1);
  const shell = asked ?? (fromEnv === 'zsh' || fromEnv === 'bash' ? fromEnv : undefined);
  if (shell !== 'bash' && shell !== 'zsh') {
    throw new InvalidInputError('usage', `navi completion: name the shell (bash or zsh); $SHELL is '${process.env.SHELL ?? ''}'`);
  }
  process.stdout.write(completionScript(shell));
  return Promise.resolve(0);
}
