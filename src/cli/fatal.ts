/**
 * The last line of defence: an error nobody handled becomes one line on stderr and an exit
 * code — never a stack trace (set NAVI_DEBUG=1 to see one).
 */
import { describeError, EXIT, isNaviError } from '../errors.js';

export function reportFatal(err: unknown): number {
  if (isNaviError(err)) {
    process.stderr.write(`navi: ${err.message}\n`);
    return err.exitCode;
  }
  process.stderr.write(`navi: unexpected error: ${describeError(err)}\n`);
  if (process.env.NAVI_DEBUG && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
  return EXIT.error;
}
