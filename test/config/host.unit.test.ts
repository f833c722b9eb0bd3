/**
 * `OLLAMA_HOST` / `llm.host` as ollama reads it: envconfig/config.go `Host()` (scheme, default
 * port, bare IPv6, path), then `ConnectableHost()` (bind-all addresses → loopback), which is
 * where ollama's own launchers connect.
 */
import { describe, expect, it } from 'vitest';
import { normalizeOllamaHost } from '../../src/config/host.js';

describe('normalizeOllamaHost (envconfig Host + ConnectableHost)', () => {
  it.each([
    // No scheme: http and port 11434 (Host: `case !ok`).
    ['127.0.0.1:11434', 'http://127.0.0.1:11434'],
    ['localhost', 'http://localhost:11434'],
    ['gpu-box:8080', 'http://gpu-box:8080'],
    ['gpu-box:80', 'http://gpu-box'],
    // `:port`: Go leaves the host empty, which dials the local system.
    [':9999', 'http://127.0.0.1:9999'],
    // The bare name ollama.com is https on 443 (Host's special case).
    ['ollama.com', 'https://ollama.com'],
    // An explicit scheme defaults to its own port (Host: `case scheme == "http"` → 80, https → 443).
    ['http://127.0.0.1:11434', 'http://127.0.0.1:11434'],
    ['http://gpu-box', 'http://gpu-box'],
    ['https://gpu-box', 'https://gpu-box'],
    ['HTTP://Gpu-Box:1', 'http://gpu-box:1'],
    // Host() compares the scheme case-sensitively (envconfig/config.go 30-36): another case keeps
    // the default port 11434; the client lowercases the scheme when it parses the URL.
    ['HTTP://gpu-box', 'http://gpu-box:11434'],
    ['Https://gpu-box', 'https://gpu-box:11434'],
    ['HTTPS://gpu-box:443', 'https://gpu-box'],
    ['http://:8080', 'http://127.0.0.1:8080'],
    // Bind-all addresses connect to loopback (ConnectableHost: IsUnspecified, To4).
    ['0.0.0.0', 'http://127.0.0.1:11434'],
    ['0.0.0.0:8080', 'http://127.0.0.1:8080'],
    ['http://0.0.0.0', 'http://127.0.0.1'],
    ['::', 'http://[::1]:11434'],
    ['[::]', 'http://[::1]:11434'],
    ['[::]:9000', 'http://[::1]:9000'],
    ['https://[::]:8443/x/', 'https://[::1]:8443/x'],
    ['::ffff:0.0.0.0', 'http://127.0.0.1:11434'],
    // Bare IPv6 (SplitHostPort fails, ParseIP succeeds → default port); bracketed with a port.
    ['::1', 'http://[::1]:11434'],
    ['[::1]', 'http://[::1]:11434'],
    ['[::1]:11434', 'http://[::1]:11434'],
    ['[::1]:8080', 'http://[::1]:8080'],
    ['0:0:0:0:0:0:0:1', 'http://[::1]:11434'],
    ['fd00::2', 'http://[fd00::2]:11434'],
    // Everything after the first `/` is the path; a trailing slash is dropped so URLs join.
    ['host/v1/', 'http://host:11434/v1'],
    ['https://ollama.example.com/', 'https://ollama.example.com'],
    ['https://proxy.example.com/ollama/', 'https://proxy.example.com/ollama'],
    // Credentials for a proxy are kept (the client sends them; messages never show them).
    ['http://u:p@h:5/a', 'http://u:p@h:5/a'],
    ['  http://h:1  ', 'http://h:1'],
  ])('%j → %j', (input, want) => {
    expect(normalizeOllamaHost(input)).toBe(want);
  });

  it.each([
    ['', 'empty (the loader treats an empty variable as unset)'],
    ['   ', 'blank'],
    ['ftp://h', 'navi speaks only http and https'],
    ['http://', 'no host'],
    ['a b', 'not a host name'],
    ['http://h:1/?x=1', 'query'],
    ['h:99999', 'port out of range (ollama warns and uses the default; navi refuses)'],
    ['h:abc', 'port not a number'],
    ['h:', 'empty port'],
    ['::1:11434', 'an IPv6 address with a port needs brackets'],
  ])('%j is refused (%s)', (input) => {
    expect(normalizeOllamaHost(input)).toBeUndefined();
  });

  it('is idempotent', () => {
    for (const input of ['0.0.0.0', '::1', 'gpu-box', 'https://x/p/', 'ollama.com', 'http://u:p@h:5/a']) {
      const once = normalizeOllamaHost(input);
      expect(once).toBeDefined();
      expect(normalizeOllamaHost(once ?? '')).toBe(once);
    }
  });
});
