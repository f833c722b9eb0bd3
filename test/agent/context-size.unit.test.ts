import { describe, expect, it } from 'vitest';
import { contextTooLargeMessage, promptTooLargeMessage } from '../../src/agent/context-size.js';

describe('context too large: the sizes and the fix (issue 18 item 15)', () => {
  it.each([
    [{ estimate: 3_500_000, numCtx: 32768, contextLength: 40960 }, /about 3500000 tokens; num_ctx 32768, model context 40960\). Shorten it .* raise llm\.num_ctx \(up to the model's 40960\)\.$/],
    [{ estimate: 50_000, numCtx: 40960, contextLength: 40960 }, /num_ctx 40960, model context 40960\). .*use a model with a larger context\.$/],
    [{ estimate: 9000, numCtx: 8192 }, /about 9000 tokens; num_ctx 8192\). .*raise llm\.num_ctx if the model supports a larger context\.$/],
  ])('prompt %o', (sizes, want) => {
    const text = promptTooLargeMessage(sizes);
    expect(text).toMatch(want);
    expect(text).not.toMatch(/no longer/);
  });

  it.each([
    [true, /^The request does not fit .*Shorten the prompt/],
    [false, /^The conversation no longer fits .*Start a new session/],
  ])('a turn request, never fit = %s', (neverFit, want) => {
    const text = contextTooLargeMessage({ estimate: 9000, numCtx: 8192, contextLength: 32768 }, neverFit);
    expect(text).toMatch(want);
    expect(text).toContain('about 9000 tokens; num_ctx 8192, model context 32768');
  });
});
