/**
 * Ollama host normalisation. `OLLAMA_HOST` is shared with the Ollama server itself, so navi
 * reads it the way ollama does: envconfig/config.go `Host()` (scheme, default port, bare IPv6,
 * path) followed by `ConnectableHost()` (a bind-all address such as 0.0.0.0 is where the
 * server listens, not where a client can connect: use loopback), which is what ollama's own
 * launchers and desktop app connect to.
 */

import { isIP } from 'node:net';
import { DEFAULT_OLLAMA_PORT } from './defaults.js';

/** Go's `net.SplitHostPort`: `host:port` or `[v6]:port`, undefined when there is no port or too many colons. */
function splitHostPort(hostport: string): { host: string; port: string } | undefined {
  if (hostport.startsWith('[')) {
    const close = hostport.indexOf(']');
    if (close < 0 || hostport[close + 1] !== ':') return undefined;
    const port = hostport.slice(close + 2);
    return port.includes(':') ? undefined : { host: hostport.slice(1, close), port };
  }
  const colon = hostport.lastIndexOf(':');
  if (colon < 0) return undefined;
  const host = hostport.slice(0, colon);
  return host.includes(':') ? undefined : { host, port: hostport.slice(colon + 1) };
}

/** `host` as it goes inside a URL: IPv6 in brackets. */
function urlHost(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}

/**
 * `http(s)://host[:port][/path]` for `value` (without a trailing slash, so paths join
 * cleanly), or undefined when it cannot be an Ollama URL. As envconfig `Host()` reads it:
 * - no scheme → `http` and port 11434 (`localhost` → `http://localhost:11434`); the bare
 *   name `ollama.com` → `https://ollama.com:443`;
 * - explicit `http://` / `https://` without a port → 80 / 443 (the URL's own default), but
 *   only in lower case: `HTTP://box` → `http://box:11434`, as Host() compares case-sensitively;
 * - `:port` → 127.0.0.1 (Go leaves the host empty, which dials the local system);
 * - bare IPv6 (`::1`, `[::1]`) gets the default port; `[::1]:8080` keeps its port;
 * - everything after the first `/` is the path.
 * Then as `ConnectableHost()`: 0.0.0.0 → 127.0.0.1 and `::` → ::1.
 * Where navi is stricter than ollama: a port that is not 0–65535 (ollama warns and falls back
 * to the default port), a scheme other than http(s), a query or fragment, spaces — each is a
 * config error rather than a guess.
 */
export function normalizeOllamaHost(value: string): string | undefined {
  const s = value.trim();
  if (s === '') return undefined;
  const cut = s.indexOf('://');
  let scheme = 'http';
  let rest = s;
  let defaultPort = String(DEFAULT_OLLAMA_PORT);
  if (cut < 0) {
    if (s === 'ollama.com') [scheme, rest] = ['https', 'ollama.com:443'];
  } else {
    const written = s.slice(0, cut);
    // Host() picks the default port by comparing the scheme as written: `HTTP://box` is port
    // 11434, like a scheme it does not know (envconfig/config.go 30-36). Ollama's client then
    // lowercases it when it parses the request URL (api/client.go 116-132, url.Parse).
    if (written === 'http') defaultPort = '80';
    else if (written === 'https') defaultPort = '443';
    scheme = written.toLowerCase();
    rest = s.slice(cut + 3);
    // Any other scheme: Ollama's server would listen, but its client fails ("unsupported protocol scheme").
    if (scheme !== 'http' && scheme !== 'https') return undefined;
  }
  const slash = rest.indexOf('/');
  const authority = slash < 0 ? rest : rest.slice(0, slash);
  const path = slash < 0 ? '' : rest.slice(slash);
  // `user:password@` (a proxy in front of Ollama) is not part of host:port; ollama itself
  // would misread it, but a URL with credentials is unambiguous, so navi keeps them.
  const at = authority.lastIndexOf('@');
  const userinfo = at < 0 ? '' : authority.slice(0, at + 1);
  const hostport = authority.slice(at + 1);
  // `http://` alone: ollama would dial 127.0.0.1:80, which is never what was meant.
  if (hostport === '') return undefined;
  let split = splitHostPort(hostport);
  if (split === undefined) {
    // No port, or a bare IPv6 address: the whole thing is the host, with the default port.
    const bare = hostport.replace(/^\[|\]$/g, '');
    split = { host: isIP(bare) === 6 ? bare : hostport, port: defaultPort };
  }
  if (!/^\d{1,5}$/.test(split.port) || Number(split.port) > 65535) return undefined;
  const host = split.host === '' ? '127.0.0.1' : split.host;
  let url: URL;
  try {
    url = new URL(`${scheme}://${userinfo}${urlHost(host)}:${split.port}${path}`);
  } catch {
    return undefined;
  }
  if (url.hostname === '' || url.search !== '' || url.hash !== '') return undefined;
  // ConnectableHost: the unspecified addresses (WHATWG URL has already normalised `0`, `[0::0]`, …).
  // Go's IsUnspecified also matches the IPv4-mapped 0.0.0.0, and To4() sends that to 127.0.0.1.
  if (url.hostname === '0.0.0.0' || url.hostname === '[::ffff:0:0]') url.hostname = '127.0.0.1';
  else if (url.hostname === '[::]') url.hostname = '[::1]';
  const auth = url.username ? `${url.username}${url.password ? `:${url.password}` : ''}@` : '';
  return `${url.protocol}//${auth}${url.host}${url.pathname.replace(/\/+$/, '')}`;
}
