/**
 * What navi may say about a PostgreSQL URL: it is shown in `location`, errors and `doctor`, and
 * must never reveal the password.
 */

/** Fields of a postgres:// URL that messages mention. */
export interface ServerAddress {
  /** `host:port`, or the socket directory for a Unix-socket URL. */
  hostPort: string;
  user: string;
  database: string;
}

/** PostgreSQL's default port, used when the URL names none. */
const DEFAULT_PORT = '5432';

/** True for URLs postgres.js accepts: `postgres://` or `postgresql://`. */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

/** The URL with any password replaced by `***` (also in `?password=`). Never throws. */
export function redactUrl(url: string): string {
  // Regex rather than URL parsing so that malformed or multi-host URLs are redacted too.
  return url
    .replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/?#@]*):[^@/?#]*@/i, '$1:***@')
    .replace(/([?&]password=)[^&#]*/gi, '$1***');
}

/** Host, port, user and database named by the URL, for messages. */
export function describeServer(url: string): ServerAddress {
  const parsed = parseLoosely(url);
  const socketHost = parsed?.searchParams.get('host');
  const host = parsed?.hostname || socketHost || 'localhost';
  const port = parsed?.port || DEFAULT_PORT;
  const user = parsed?.username ? decodeURIComponent(parsed.username) : 'postgres';
  const database = parsed?.pathname.replace(/^\//, '') || user;
  return {
    hostPort: host.startsWith('/') ? host : `${host}:${port}`,
    user,
    database: decodeURIComponent(database),
  };
}

function parseLoosely(url: string): URL | null {
  try {
    // `new URL` rejects several hosts (`h1:5432,h2:5432`): keep the first for messages.
    return new URL(url.replace(/^(postgres(?:ql)?:\/\/(?:[^@/]*@)?[^,/?#]*),[^/?#]*/i, '$1'));
  } catch {
    return null;
  }
}
