import { describe, expect, it } from 'vitest';
import { normalizeOllamaHost } from '../../src/config/host.js';

describe('normalizeOllamaHost (as the ollama client reads OLLAMA_HOST)', () => {
  it.each([
    ['http://127.0.0.1:11434', 'http://127.0.0.1:11434'],
    ['127.0.0.1:11434', 'http://127.0.0.1:11434'],
    ['localhost', 'http://localhost:11434'],
    [':9999', 'http://127.0.0.1:9999'],
    ['0.0.0.0', 'http://0.0.0.0:11434'],
    ['[::1]:11434', 'http://[::1]:11434'],
    ['gpu-box:80', 'http://gpu-box'],
    ['http://gpu-box', 'http://gpu-box'],
    ['https://ollama.example.com/', 'https://ollama.example.com'],
    ['https://proxy.example.com/ollama/', 'https://proxy.example.com/ollama'],
    ['  http://h:1  ', 'http://h:1'],
  ])('%j → %j', (input, want) => {
    expect(normalizeOllamaHost(input)).toBe(want);
  });

  it.each(['', '   ', 'ftp://h', 'http://', 'a b', 'http://h:1/?x=1'])('%j is refused', (input) => {
    expect(normalizeOllamaHost(input)).toBeUndefined();
  });
});
