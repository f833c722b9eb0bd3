/**
 * The last line of defence: an error nobody handled becomes one line on the host's stderr and an
 * exit code — never a stack trace (set NAVI_DEBUG=1 in its environment to see one).
 */
import { describeError, EXIT, isNaviError } from '../errors.js';
import type { CliHost } from './host.js';

export function reportFatal(err: unknown, host: Pick<CliHost, 'stderr' | 'env'>): number {
  if (isNaviError(err)) {
    host.stderr.write(`navi: ${err.message}\n`);
    return err.exitCode;
  }
  host.stderr.write(`navi: unexpected error: ${describeError(err)}\n`);
  if (host.env.NAVI_DEBUG && err instanceof Error && err.stack) host.stderr.write(`${err.stack}\n`);
  return EXIT.error;
}
