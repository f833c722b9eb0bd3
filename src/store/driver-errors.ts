/**
 * Turns driver errors (PGlite, postgres.js, drizzle's wrappers) into one-line `StorageError`s.
 * drizzle wraps query failures in an error whose message holds the SQL and its parameters (user
 * content): never show that message, read the driver error in its `cause` chain instead.
 */
import { NaviError, StorageError } from '../errors.js';
import { describeServer } from './database-url.js';

/** What navi reads from a driver error. */
export interface DriverErrorInfo {
  /** SQLSTATE (`23505`) or errno / postgres.js code (`ECONNREFUSED`, `CONNECT_TIMEOUT`). */
  code?: string;
  message: string;
  /** Column of a NOT NULL violation (PGlite `column`, postgres.js `column_name`). */
  column?: string;
}

/** The innermost error that carries a SQLSTATE or errno `code`, walking `cause`. */
export function driverError(err: unknown): DriverErrorInfo {
  let current: unknown = err;
  let found: DriverErrorInfo | null = null;
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth++) {
    const code = stringProp(current, 'code');
    const message = stringProp(current, 'message');
    if (code !== undefined && message !== undefined) {
      found = { code, message, column: stringProp(current, 'column') ?? stringProp(current, 'column_name') };
    }
    current = (current as { cause?: unknown }).cause;
  }
  if (found) return found;
  if (err instanceof Error && !err.message.startsWith('Failed query:')) return { message: err.message };
  return { message: 'unknown database error' };
}

/** SQLSTATE or errno of a driver error, if any. */
export function errorCode(err: unknown): string | undefined {
  return driverError(err).code;
}

/** A failed query in repository operation `op` (e.g. `messages.append`). */
export function queryError(op: string, err: unknown): NaviError {
  if (err instanceof NaviError) return err;
  const d = driverError(err);
  const connection = connectionProblem(d.code);
  if (connection) {
    return new StorageError('store_unreachable', `Lost the database connection during ${op}: ${connection}.`, {
      cause: err,
    });
  }
  return new StorageError('store_query_failed', `Database error during ${op}: ${firstLine(d.message)}.`, {
    cause: err,
  });
}

/** An error while connecting to / migrating a PostgreSQL server, named by host:port. */
export function postgresOpenError(url: string, err: unknown, connectTimeoutS: number): NaviError {
  if (err instanceof NaviError) return err;
  const { hostPort, user, database } = describeServer(url);
  const d = driverError(err);
  const hint = 'check DATABASE_URL / --db, or unset it to use the embedded database';
  switch (d.code ?? '') {
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ECONNRESET':
    case 'CONNECTION_CLOSED':
    case 'CONNECTION_ENDED':
    case 'CONNECTION_DESTROYED':
      return new StorageError(
        'store_unreachable',
        `Cannot reach PostgreSQL at ${hostPort} (${connectionProblem(d.code) ?? d.code}); ${hint}.`,
        { cause: err },
      );
    case 'CONNECT_TIMEOUT':
      return new StorageError(
        'store_unreachable',
        `Cannot reach PostgreSQL at ${hostPort} (no answer within ${connectTimeoutS} s); ${hint}.`,
        { cause: err },
      );
    case '28P01':
    case '28000':
      return new StorageError(
        'store_auth_failed',
        `PostgreSQL at ${hostPort} rejected user "${user}" (${firstLine(d.message)}); check the user and password in DATABASE_URL / --db.`,
        { cause: err },
      );
    case '3D000':
      return new StorageError(
        'store_database_missing',
        `Database "${database}" does not exist on ${hostPort}; create it (createdb ${database}) or fix DATABASE_URL / --db.`,
        { cause: err },
      );
    default:
      return new StorageError(
        'store_open_failed',
        `Cannot open the database at ${hostPort}: ${firstLine(d.message)}.`,
        { cause: err },
      );
  }
}

/** Plain words for connection-level error codes; undefined for SQL errors. */
function connectionProblem(code: string | undefined): string | undefined {
  switch (code ?? '') {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    case 'ECONNRESET':
    case 'CONNECTION_CLOSED':
    case 'CONNECTION_ENDED':
    case 'CONNECTION_DESTROYED':
    case '57P01': // admin_shutdown
    case '57P02': // crash_shutdown
      return 'connection closed by the server';
    case '57P03': // cannot_connect_now: a reconnect while the server stops or starts
      return 'the server is shutting down or starting up';
    case 'CONNECT_TIMEOUT':
      return 'connection timed out';
    default:
      return undefined;
  }
}

function firstLine(text: string): string {
  return (text.split('\n')[0] ?? text).replace(/\.$/, '');
}

function stringProp(obj: object, key: string): string | undefined {
  const value = (obj as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Runs one repository operation, turning any driver failure into a `StorageError`. `special`
 * maps a SQLSTATE (e.g. a foreign-key violation) to a more precise error.
 */
export async function guardQuery<T>(
  op: string,
  run: () => Promise<T>,
  special?: (code: string | undefined) => NaviError | undefined,
): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw special?.(errorCode(err)) ?? queryError(op, err);
  }
}

/** The error every repository throws for a write to a session that does not exist. */
export function missingSession(sessionId: string): StorageError {
  return new StorageError('session_not_found', `Session ${sessionId} does not exist.`);
}

/** `guardQuery`'s `special` for writes whose foreign key names a session. */
export function sessionForeignKey(sessionId: string): (code: string | undefined) => NaviError | undefined {
  return (code) => (code === '23503' ? missingSession(sessionId) : undefined);
}
