import { NaviError } from '../../errors.js';

/**
 * Forced compression (`navi sessions compact ID`) found nothing older than the messages it
 * keeps verbatim: exit 1 with a clear message, as the seed's NothingToCompactError.
 */
export class NothingToCompactError extends NaviError {
  constructor(message = 'nothing to compact: the context holds only the most recent messages, which are kept verbatim') {
    super('error', 'nothing_to_compact', message);
  }
}
