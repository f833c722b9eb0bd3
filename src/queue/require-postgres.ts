/** The queue lives in PostgreSQL: PGlite (one process's embedded database) cannot be shared by workers. */
import { InvalidInputError } from '../errors.js';
import { isPostgresUrl } from '../store/database-url.js';

export function requirePostgres(url: string | undefined, command: string): string {
  if (url === undefined || !isPostgresUrl(url)) {
    throw new InvalidInputError(
      'queue_needs_postgres',
      `navi ${command} needs PostgreSQL: set DATABASE_URL (or --db postgres://user@host:5432/navi) to the database every worker shares; the embedded PGlite database has no job queue`,
    );
  }
  return url;
}
