/**
 * Ollama host normalisation. `OLLAMA_HOST` is shared with the Ollama server itself, which
 * accepts `host`, `host:port` and `:port`; the ollama client turns those into URLs the same way
 * this does, so navi connects where `ollama` would.
 */

import { DEFAULT_OLLAMA_PORT } from './defaults.js';

/**
 * `http(s)://host[:port][/path]` for `value`, or undefined when it cannot be a URL. Bare forms
 * get `http://` and, without a port, Ollama's port 11434; `:port` means 127.0.0.1. A trailing
 * slash is dropped so URLs join cleanly.
 */
export function normalizeOllamaHost(value: string): string | undefined {
  let s = value.trim();
  if (s === '') return undefined;
  const explicitScheme = s.includes('://');
  if (!explicitScheme) {
    if (s.startsWith(':')) s = `127.0.0.1${s}`;
    // `[::1]:11434`, `gpu-box:8080`: a port given by the user is kept even when it is 80.
    const hasPort = /^(?:\[[^\]]*\]|[^/:[\]]+):\d+(?:\/|$)/.test(s);
    s = `http://${s}`;
    if (!hasPort) {
      const slash = s.indexOf('/', 'http://'.length);
      s = slash < 0 ? `${s}:${DEFAULT_OLLAMA_PORT}` : `${s.slice(0, slash)}:${DEFAULT_OLLAMA_PORT}${s.slice(slash)}`;
    }
  }
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') return undefined;
  if (url.search !== '' || url.hash !== '') return undefined;
  const auth = url.username ? `${url.username}${url.password ? `:${url.password}` : ''}@` : '';
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.protocol}//${auth}${url.host}${path}`;
}
