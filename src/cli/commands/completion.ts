/** `navi completion [bash|zsh]`: prints the completion script (no database, no model). */
import { InvalidInputError } from '../../errors.js';
import { completionScript } from '../completion-script.js';
import type { GlobalArgs } from '../global-args.js';
import type { CliHost } from '../host.js';

export function completionCommand(argv: GlobalArgs & Record<string, unknown>, host: CliHost): Promise<number> {
  const asked = typeof argv.shell === 'string' ? argv.shell : undefined;
  const fromEnv = (host.env.SHELL ?? '').split('/').at(-1);
  const shell = asked ?? (fromEnv === 'zsh' || fromEnv === 'bash' ? fromEnv : undefined);
  if (shell !== 'bash' && shell !== 'zsh') {
    throw new InvalidInputError('usage', `navi completion: name the shell (bash or zsh); $SHELL is '${host.env.SHELL ?? ''}'`);
  }
  host.stdout.write(completionScript(shell));
  return Promise.resolve(0);
}
