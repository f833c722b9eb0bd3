/**
 * The bound on a call's reply (`options.num_predict`): the room the window has left after the
 * prompt, less a margin, capped, never below a floor. Without it Ollama lets a reply run to
 * 10 × num_ctx and llama-server's context shift discards half the window mid-reply (audit D12).
 */
import { describe, expect, it } from 'vitest';
import { MIN_REPLY_TOKENS, REPLY_MARGIN_TOKENS, replyTokenBound } from '../../src/llm/reply-bound.js';

describe('replyTokenBound', () => {
  it.each<[string, { numCtx: number; promptTokens: number; cap?: number }, number]>([
    ['an empty window: all of it but the margin', { numCtx: 8192, promptTokens: 0 }, 8192 - REPLY_MARGIN_TOKENS],
    ['the room left after the prompt', { numCtx: 8192, promptTokens: 3000 }, 8192 - 3000 - REPLY_MARGIN_TOKENS],
    ['a cap below the room', { numCtx: 65536, promptTokens: 3000, cap: 8192 }, 8192],
    ['a cap above the room', { numCtx: 8192, promptTokens: 7000, cap: 16384 }, 8192 - 7000 - REPLY_MARGIN_TOKENS],
    ['a full window still leaves the floor', { numCtx: 8192, promptTokens: 8000 }, MIN_REPLY_TOKENS],
    ['an estimate past the window: the floor', { numCtx: 8192, promptTokens: 20000 }, MIN_REPLY_TOKENS],
    ['a cap below the floor wins', { numCtx: 8192, promptTokens: 8000, cap: 100 }, 100],
    ['a tiny window: never more than the window', { numCtx: 300, promptTokens: 0 }, 300],
    ['a cap of 0 means no cap', { numCtx: 4096, promptTokens: 1000, cap: 0 }, 4096 - 1000 - REPLY_MARGIN_TOKENS],
    ['fractions round down (the prompt up)', { numCtx: 8192.7, promptTokens: 1000.2 }, 8192 - 1001 - REPLY_MARGIN_TOKENS],
  ])('%s', (_name, input, want) => {
    const bound = replyTokenBound(input);
    expect(bound).toBe(want);
    expect(Number.isInteger(bound)).toBe(true);
  });

  it('with a realistic prompt, prompt + reply fits the window (no context shift)', () => {
    for (const promptTokens of [0, 1000, 30000, 60000]) {
      const bound = replyTokenBound({ numCtx: 65536, promptTokens });
      expect(promptTokens + bound).toBeLessThanOrEqual(65536);
    }
  });
});
