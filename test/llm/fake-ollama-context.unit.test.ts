/**
 * The fake Ollama's context window (test/support/fake-ollama-context.ts): num_ctx clamped to the
 * model's context and reported by /api/ps, silent truncation by default, the overflow 400 with
 * `truncate: false`, and the clean end without `done`.
 */
import { describe, expect, it } from 'vitest';
import { fitPrompt, loadedContext } from '../support/fake-ollama-context.js';
import { fakeOllama } from '../support/fake-ollama-harness.js';

async function chat(url: string, body: Record<string, unknown>): Promise<{ status: number; lines: Array<Record<string, unknown>>; text: string }> {
  const response = await fetch(`${url}/api/chat`, { method: 'POST', body: JSON.stringify(body) });
  const text = await response.text();
  const lines = response.status === 200 ? text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>) : [];
  return { status: response.status, lines, text };
}

const filler = (n: number): string => 'word '.repeat(n);

describe('context: clamp, truncation, overflow', () => {
  it.each([
    [{ name: 'm', context_length: 40960 }, { options: { num_ctx: 131072 } }, 40960],
    [{ name: 'm', context_length: 40960 }, { options: { num_ctx: 8192 } }, 8192],
    [{ name: 'm' }, { options: { num_ctx: 65536 } }, 65536],
    [{ name: 'm', context_length: 40960 }, {}, 4096],
  ])('loadedContext(%o, %o) = %i', (model, body, expected) => {
    expect(loadedContext(model, body)).toBe(expected);
  });

  it('truncate absent: the oldest non-system messages go first, the last always stays, the count falls', () => {
    const messages = [
      { role: 'system', content: filler(20) },
      { role: 'user', content: `the task ${filler(200)}` },
      { role: 'assistant', content: filler(200) },
      { role: 'user', content: 'now this' },
    ];
    const bytes = Buffer.byteLength(JSON.stringify({ model: 'm', messages }));
    const fit = fitPrompt({ messages }, bytes, 300);
    expect(fit).toMatchObject({ kind: 'truncated', dropped: 2 });
    expect(fitPrompt({ messages, truncate: false }, bytes, 300)).toMatchObject({ kind: 'overflow' });
    expect(fitPrompt({ messages, truncate: false }, bytes, 100_000)).toEqual({ kind: 'fits', promptTokens: Math.ceil(bytes / 4) });
  });

  it('over HTTP: a silent truncation by default, the 400 with llama-server’s body when truncate is false; /api/ps shows the clamped context', async () => {
    const f = await fakeOllama({ models: [{ name: 'small:1b', context_length: 256 }], turns: [{ content: 'ok' }, { content: 'never' }] });
    const messages = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: `the task ${filler(400)}` },
      { role: 'user', content: 'and now?' },
    ];
    const body = { model: 'small:1b', messages, options: { num_ctx: 65536 }, keep_alive: '30m' };
    const truncated = await chat(f.url, body);
    expect(truncated.status).toBe(200);
    const done = truncated.lines.at(-1) ?? {};
    expect(done.done).toBe(true);
    expect(done.prompt_eval_count).toBeLessThan(Math.ceil(JSON.stringify(body).length / 4));

    const refused = await chat(f.url, { ...body, truncate: false });
    expect(refused.status).toBe(400);
    const error = (JSON.parse(refused.text) as { error: string }).error;
    expect(error).toMatch(/^\{"error":\{"code":400,"message":"request \(\d+ tokens\) exceeds the available context size \(256 tokens\), try increasing it"/);
    expect(f.turnsServed, 'a refused request consumes no turn').toBe(1);

    const ps = (await (await fetch(`${f.url}/api/ps`)).json()) as { models: Array<Record<string, unknown>> };
    expect(ps.models).toEqual([
      expect.objectContaining({ name: 'small:1b', context_length: 256, size: 5_200_000_000, size_vram: 5_200_000_000 }),
    ]);
    const expires = Date.parse(String(ps.models[0]?.expires_at));
    expect(expires).toBeGreaterThan(Date.now() + 20 * 60_000);
  });

  it('/api/ps: nothing before the first chat, a spilled model reports size_vram below size, keep_alive 0 unloads', async () => {
    const f = await fakeOllama({ models: [{ name: 'big:70b', context_length: 8192, size: 40e9, size_vram: 24e9 }], turns: [{ content: 'a' }, { content: 'b' }] });
    const ps = async (): Promise<Array<Record<string, unknown>>> => ((await (await fetch(`${f.url}/api/ps`)).json()) as { models: Array<Record<string, unknown>> }).models;
    expect(await ps()).toEqual([]);
    await chat(f.url, { model: 'big:70b', messages: [{ role: 'user', content: 'hi' }], options: { num_ctx: 4096 } });
    expect(await ps()).toEqual([expect.objectContaining({ context_length: 4096, size: 40e9, size_vram: 24e9 })]);
    await chat(f.url, { model: 'big:70b', messages: [{ role: 'user', content: 'hi' }], keep_alive: 0 });
    expect(await ps()).toEqual([]);
  });

  it('the repeat-token abort: a 200 body that ends cleanly with neither done nor error', async () => {
    const f = await fakeOllama({ turns: [{ content: 'again again again', no_done: true }] });
    const res = await chat(f.url, { model: 'qwen3:8b', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(200);
    expect(res.lines.length).toBeGreaterThan(0);
    expect(res.lines.some((l) => l.done === true || 'error' in l)).toBe(false);
  });
});
