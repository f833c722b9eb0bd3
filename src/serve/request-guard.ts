/**
 * Who may talk to `navi serve`, before the token is even looked at (SPEC §14, issue 35) — the
 * rules of Jupyter Server and Ollama's OLLAMA_ORIGINS, as small pure functions:
 *
 * - `Host` must name this server: a loopback name, the address it is bound to (any address of
 *   this machine when bound to 0.0.0.0 or ::), or a name given with `--allowed-host`. A page on a
 *   rebinding domain (attacker.example, resolving to 127.0.0.1 after the page loaded) sends its
 *   own name as Host and is refused (403) on every request and WebSocket upgrade.
 * - `Origin`, when a browser sends one, must be the page's own: the same host and port as the
 *   request's Host, over http or https. A page on another origin (another port of localhost
 *   included) is refused (403) even before the token would refuse it (401).
 * - A request with a body must say `Content-Type: application/json` (415): a cross-origin
 *   `text/plain` POST is a "simple request" that needs no CORS preflight, so this closes the one
 *   door a page has without reading the answer. A declared length above the limit is 413 before
 *   anything is read (a streamed body is cut at the limit while it is read: routes.ts).
 */
import { isIP } from 'node:net';

/** The body limit when none is set: 1 MB (a message's content, a task's text). */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** A refusal: the status and the `{error:{code,message}}` to answer with. */
export interface Refusal {
  status: 403 | 413 | 415;
  code: string;
  message: string;
}

/** True for 127.0.0.0/8, ::1 (also as ::ffff:127.x) and `localhost`: only this machine can connect. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || h === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(h) || /^::ffff:7f[0-9a-f]{2}:/.test(h);
  return false;
}

/** True for the addresses that listen on every interface. */
export function isWildcardAddress(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === '0.0.0.0' || h === '::' || h === '0:0:0:0:0:0:0:0';
}

/**
 * A host name as browsers put it in Host and Origin: lower case, IPv6 without brackets, IPv4 in
 * dotted form (the WHATWG URL parser turns `2130706433` and `0x7f.1` into 127.0.0.1, as a
 * browser would). Null for anything that is not a host.
 */
export function normalizeHostname(name: string): string | null {
  const bare = name.trim();
  if (bare === '' || /[/?#@\s\\]/.test(bare)) return null;
  const inUrl = isIP(bare) === 6 ? `[${bare}]` : bare;
  try {
    const u = new URL(`http://${inUrl}/`);
    if (u.port !== '' || u.username !== '' || u.password !== '') return null;
    return u.hostname.replace(/^\[|\]$/g, '');
  } catch {
    return null;
  }
}

/** A Host header's parts (`name`, `name:port`, `[v6]:port`), normalized; null when malformed. */
export function parseHostHeader(value: string | undefined | null): { hostname: string; host: string } | null {
  if (value === undefined || value === null) return null;
  const v = value.trim();
  if (v === '' || /[/?#@\s\\]/.test(v)) return null;
  try {
    const u = new URL(`http://${v}/`);
    // u.host: the name and a port other than 80, as an http Origin spells it.
    return { hostname: u.hostname.replace(/^\[|\]$/g, ''), host: u.host };
  } catch {
    return null;
  }
}

/**
 * An `--allowed-host` value checked and normalized: a name or address without scheme, port or
 * path; `.example.com` for that domain and every name under it; `*` for any Host (the token
 * still guards everything; only DNS rebinding is no longer refused). Null when it is none of those.
 */
export function parseAllowedHost(value: string): string | null {
  const v = value.trim().toLowerCase();
  if (v === '*') return '*';
  if (v.startsWith('.')) {
    const rest = normalizeHostname(v.slice(1));
    return rest === null || isIP(rest) !== 0 || rest.startsWith('.') ? null : `.${rest}`;
  }
  return normalizeHostname(v);
}

export interface HostPolicy {
  /** The address the server is bound to (`--host`). */
  bound: string;
  /** `--allowed-host` values, as parseAllowedHost returns them. */
  allowed: readonly string[];
  /** This machine's addresses (asked only when bound to a wildcard address and nothing else matched). */
  localAddresses: () => readonly string[];
}

/** Whether a normalized hostname names this server under the policy. */
export function hostnameAllowed(hostname: string, policy: HostPolicy): boolean {
  if (isLoopbackHost(hostname)) return true;
  const bound = normalizeHostname(policy.bound);
  if (bound !== null && hostname === bound) return true;
  for (const a of policy.allowed) {
    if (a === '*' || a === hostname) return true;
    if (a.startsWith('.') && (hostname === a.slice(1) || hostname.endsWith(a))) return true;
  }
  // Bound to every interface: an address of this machine typed as an address is this server
  // (a rebinding page always sends a name; names go through --allowed-host).
  if (isWildcardAddress(policy.bound) && isIP(hostname) !== 0) {
    return policy.localAddresses().some((addr) => normalizeHostname(addr) === hostname);
  }
  return false;
}

/** The Host rule: null when allowed, else the 403 to answer with. */
export function checkHost(hostHeader: string | undefined | null, policy: HostPolicy): Refusal | null {
  const parsed = parseHostHeader(hostHeader);
  if (parsed === null) return { status: 403, code: 'host_not_allowed', message: 'the request has no valid Host header' };
  if (hostnameAllowed(parsed.hostname, policy)) return null;
  return {
    status: 403,
    code: 'host_not_allowed',
    message: `Host ${parsed.host} is not this server's name (loopback, the address it listens on, or one given with --allowed-host)`,
  };
}

/**
 * The Origin rule: no Origin (a script, curl, a same-origin GET) passes; otherwise it must be
 * http(s) on the same host and port as the request's Host — the page navi serves, and no other.
 * Null when allowed, else the 403 to answer with.
 */
export function checkOrigin(origin: string | undefined | null, hostHeader: string | undefined | null): Refusal | null {
  if (origin === undefined || origin === null) return null;
  const refused: Refusal = { status: 403, code: 'origin_not_allowed', message: `Origin ${origin.slice(0, 200)} is not this server's own page` };
  const host = parseHostHeader(hostHeader);
  if (host === null) return refused;
  let u: URL;
  try {
    u = new URL(origin);
  } catch {
    return refused; // `null` (a sandboxed frame, a file: page) and garbage
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return refused;
  // An Origin is scheme://host[:port] and nothing else.
  if (u.username !== '' || u.password !== '' || u.pathname !== '/' || u.search !== '' || u.hash !== '' || /\/./.test(origin.replace(/^[a-z]+:\/\//i, ''))) return refused;
  // Host carries no scheme: an https origin's default port is what Host omits too.
  return u.host === host.host ? null : refused;
}

/** The parts of a request the body rule reads. */
export interface BodyHeaders {
  contentType?: string | undefined;
  contentLength?: string | undefined;
  transferEncoding?: string | undefined;
}

/** True when the request carries a body (a length above 0, or any transfer coding). */
export function hasBody(h: BodyHeaders): boolean {
  if (h.transferEncoding !== undefined && h.transferEncoding.trim() !== '') return true;
  if (h.contentLength === undefined) return false;
  const n = Number(h.contentLength.trim());
  return !Number.isFinite(n) || n > 0;
}

/** True for `application/json` with or without parameters (`; charset=utf-8`). */
export function isJsonType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  return (contentType.split(';')[0] ?? '').trim().toLowerCase() === 'application/json';
}

/**
 * The body rule as far as the headers tell: a body that is not JSON is 415; a declared length
 * above `limit` is 413 (nothing of it read). Null when the request may go on; a streamed body is
 * then counted while it is read.
 */
export function checkBodyHeaders(h: BodyHeaders, limit: number): Refusal | null {
  if (!hasBody(h)) return null;
  if (!isJsonType(h.contentType)) {
    return { status: 415, code: 'unsupported_media_type', message: `request bodies must be Content-Type: application/json (got ${h.contentType === undefined ? 'none' : h.contentType.slice(0, 100)})` };
  }
  if (h.contentLength !== undefined && (h.transferEncoding === undefined || h.transferEncoding.trim() === '')) {
    const n = Number(h.contentLength.trim());
    if (!Number.isFinite(n) || n > limit) return tooLarge(limit);
  }
  return null;
}

/** The 413 for a body above `limit` bytes. */
export function tooLarge(limit: number): Refusal {
  return { status: 413, code: 'body_too_large', message: `request bodies are limited to ${limit} bytes` };
}
