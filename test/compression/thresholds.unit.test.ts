import { describe, expect, it } from 'vitest';
import { join, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import {
  COMPRESSION_DEFAULTS,
  compressionBudget,
  compressionSettings,
  contextTokens,
  DEFAULT_PROMPT_FILE,
  loadCompressionPrompt,
  shouldCompress,
  summaryTokenCap,
} from '../../src/agent/compression/index.js';
import { charsToTokens, messageChars } from '../../src/agent/tokens.js';
import { call, result, user } from './helpers.js';

describe('shouldCompress', () => {
  it.each([
    [0, 4096, false],
    [3276, 4096, false],
    [3277, 4096, true], // 0.8 × 4096 = 3276.8
    [4096, 4096, true],
    [52428, 65536, false],
    [52429, 65536, true],
    [10, 0, false], // no window known: never compress on a division by zero
  ])('estimate %i of num_ctx %i → %s', (estimate, numCtx, expected) => {
    expect(shouldCompress(estimate, numCtx)).toBe(expected);
  });

  it('fires at 80% of the window, whatever its size', () => {
    for (const numCtx of [1000, 2048, 8192, 40960, 131072]) {
      const edge = Math.ceil((numCtx * 4) / 5); // the first estimate at or above 80 %
      expect(shouldCompress(edge - 1, numCtx), `${edge - 1} of ${numCtx}`).toBe(false);
      expect(shouldCompress(edge, numCtx), `${edge} of ${numCtx}`).toBe(true);
    }
  });
});

describe('compressionSettings', () => {
  const dir = '/profiles/coder';
  it.each([
    ['no overrides → defaults', {}, { keepRecent: 10, maxSummaryTokens: 1024, promptFile: DEFAULT_PROMPT_FILE }],
    ['keep_recent override', { compression_keep_recent: 4 }, { keepRecent: 4, maxSummaryTokens: 1024, promptFile: DEFAULT_PROMPT_FILE }],
    ['max_tokens override', { compression_max_tokens: 300 }, { keepRecent: 10, maxSummaryTokens: 300, promptFile: DEFAULT_PROMPT_FILE }],
    ['prompt file relative to the profile dir', { compression_prompt_file: 'prompts/short.md' }, { keepRecent: 10, maxSummaryTokens: 1024, promptFile: join(dir, 'prompts/short.md') }],
    ['absolute prompt file kept', { compression_prompt_file: '/etc/navi/summary.md' }, { keepRecent: 10, maxSummaryTokens: 1024, promptFile: '/etc/navi/summary.md' }],
  ])('%s', (_name, settings, expected) => {
    expect(compressionSettings({ dir, settings })).toEqual(expected);
  });

  it('uses the defaults it is given', () => {
    const defaults = { ...COMPRESSION_DEFAULTS, keepRecent: 6 };
    expect(compressionSettings({ dir, settings: {} }, defaults).keepRecent).toBe(6);
  });

  it('ships the default prompt, with the {{max_tokens}} hint', async () => {
    expect(resolve(DEFAULT_PROMPT_FILE)).toMatch(/prompts[\\/]compression[\\/]summary\.md$/);
    expect(existsSync(DEFAULT_PROMPT_FILE)).toBe(true);
    expect(await loadCompressionPrompt(DEFAULT_PROMPT_FILE)).toContain('{{max_tokens}}');
  });

  it('names the file when a prompt cannot be read', async () => {
    await expect(loadCompressionPrompt('/nonexistent/summary.md')).rejects.toThrow(/\/nonexistent\/summary\.md.*ENOENT/);
  });
});

describe('budgets', () => {
  it.each([
    [4096, 0, 2048],
    [4096, 500, 1548],
    [65536, 3000, 29768],
    [4096, 5000, 128], // overhead larger than the target: the floor
  ])('compressionBudget(%i, %i) = %i', (numCtx, overhead, expected) => {
    expect(compressionBudget(numCtx, overhead)).toBe(expected);
  });

  it.each([
    [1024, 1548, 774], // half the budget on a small window
    [1024, 29768, 1024], // the profile's cap on a large one
    [300, 29768, 300],
    [1024, 100, 64], // never below a useful minimum
  ])('summaryTokenCap(%i, %i) = %i', (max, budget, expected) => {
    expect(summaryTokenCap(max, budget)).toBe(expected);
  });

  it('contextTokens is chars/3 of what the messages add to a request', () => {
    const msgs = [user('hello'), call('shell'), result('shell', 'output')];
    const chars = msgs.reduce((n, m) => n + messageChars(m), 0);
    expect(contextTokens(msgs)).toBe(charsToTokens(chars));
    expect(contextTokens([])).toBe(0);
  });
});
