import { describe, expect, it, vi } from 'vitest';
import {
  compressContext,
  contextTokens,
  isSummaryMessage,
  NothingToCompactError,
  SUMMARY_ACK,
  summaryHeader,
  summaryTokenCap,
  type CompressionInput,
} from '../../src/agent/compression/index.js';
import { LlmUnavailableError } from '../../src/errors.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { ScriptedLlm, type ScriptedTurn } from '../support/scripted-llm.js';
import { call, exchange, reply, result, text, user, wellFormedProblems } from './helpers.js';

const PROMPT = 'Summarise tersely. Stay under {{max_tokens}} tokens.';

function input(llm: ScriptedLlm, context: readonly ChatMessage[], over: Partial<CompressionInput> = {}): CompressionInput {
  return {
    llm,
    model: 'm',
    numCtx: 8192,
    signal: new AbortController().signal,
    context,
    keepRecent: 4,
    maxSummaryTokens: 512,
    promptText: PROMPT,
    budgetTokens: 4096,
    ...over,
  };
}

const history = (): ChatMessage[] => [
  ...exchange('fix the failing test in src/a.ts', ['read_file', 'shell']),
  ...exchange('now update the README', ['write_file']),
  ...exchange('run the linter', ['shell']),
];

const fail = (): ScriptedTurn => ({ error: new LlmUnavailableError('unreachable', 'Ollama at http://127.0.0.1:11434 is unreachable') });

describe('compressContext: the model summarises', () => {
  it('sends one non-streaming think:false call with the prompt file and the older messages, and builds [summary, ...recent]', async () => {
    const llm = new ScriptedLlm([{ content: 'Task: fix tests and docs. Done: test fixed, README updated.' }]);
    const context = history();
    const res = await compressContext(input(llm, context));

    expect(llm.requests).toHaveLength(1);
    const req = llm.requests[0];
    expect(req?.think).toBe(false);
    expect(req?.numCtx).toBe(8192);
    expect(req?.model).toBe('m');
    expect(req?.tools).toBeUndefined();
    expect(req?.messages[0]).toEqual({ role: 'system', content: `Summarise tersely. Stay under ${summaryTokenCap(512, 4096)} tokens.` });
    expect(req?.messages[1]?.content).toContain('fix the failing test in src/a.ts');
    expect(req?.messages[1]?.content).toContain('→ called read_file');
    expect(req?.messages[1]?.content).not.toContain('run the linter'); // kept verbatim, not summarised

    expect(res.method).toBe('summary');
    expect(res.attempts).toBe(1);
    expect(res.safetyNet).toBe(false);
    const older = context.length - 4;
    expect(res.replaced).toEqual(context.slice(0, older));
    res.replaced.forEach((m, i) => expect(m).toBe(context[i]));
    expect(res.context[0]).toEqual({ role: 'user', content: `${summaryHeader(older)}\nTask: fix tests and docs. Done: test fixed, README updated.` });
    // The kept messages are the stored objects themselves.
    expect(res.context.slice(-4)).toEqual(context.slice(-4));
    res.context.slice(-4).forEach((m, i) => expect(m).toBe(context[older + i]));
    expect(res.tokensBefore).toBe(contextTokens(context));
    expect(res.tokensAfter).toBe(contextTokens(res.context));
    expect(wellFormedProblems(res.context)).toEqual([]);
  });

  it.each([
    ['kept messages open with a user turn → an acknowledgement follows the summary', 4, true],
    ['kept messages open with a tool call → no acknowledgement', 3, false],
  ])('%s', async (_name, keepRecent, ack) => {
    const llm = new ScriptedLlm([{ content: 'summary' }]);
    const res = await compressContext(input(llm, history(), { keepRecent }));
    expect(isSummaryMessage(res.context[0] as ChatMessage)).toBe(true);
    expect(res.context[1]?.content === SUMMARY_ACK).toBe(ack);
    expect(res.context[1]?.role).toBe('assistant');
    expect(wellFormedProblems(res.context)).toEqual([]);
  });

  it('re-summarises an earlier summary, counting what it stood for', async () => {
    const llm = new ScriptedLlm([{ content: 'first summary' }, { content: 'second summary' }]);
    const first = await compressContext(input(llm, history()));
    const grown = [...first.context, ...exchange('and the changelog', ['write_file'])];
    const second = await compressContext(input(llm, grown));
    const firstCount = history().length - 4;
    const newlyOlder = grown.length - 4 - 2; // minus the earlier summary and its acknowledgement
    expect(second.context[0]?.content.split('\n')[0]).toBe(summaryHeader(firstCount + newlyOlder));
    expect(second.context.filter(isSummaryMessage)).toHaveLength(1);
    expect(llm.requests[1]?.messages[1]?.content).toContain('EARLIER SUMMARY:\nfirst summary');
    expect(llm.requests[1]?.messages[1]?.content).not.toContain(SUMMARY_ACK);
  });

  it('cuts a summary longer than the cap', async () => {
    const llm = new ScriptedLlm([{ content: text(50_000) }]);
    const res = await compressContext(input(llm, history(), { maxSummaryTokens: 200 }));
    expect(res.method).toBe('summary');
    expect(res.summary.length).toBeLessThanOrEqual(200 * 3);
    expect(res.summary.endsWith('…')).toBe(true);
  });

  it('keeps the summariser request inside the window however long the history', async () => {
    const llm = new ScriptedLlm([{ content: 'ok' }]);
    const context = Array.from({ length: 60 }, (_, i) => exchange(`task ${i}`, ['shell'], text(5000))).flat();
    await compressContext(input(llm, context, { numCtx: 4096, budgetTokens: 1500, maxSummaryTokens: 1024 }));
    const req = llm.requests[0];
    const cap = summaryTokenCap(1024, 1500);
    expect(contextTokens(req?.messages ?? [])).toBeLessThanOrEqual(4096 - cap);
    // The original request is pinned; the newest older messages follow an omission note.
    expect(req?.messages[1]?.content).toContain('task 0');
    expect(req?.messages[1]?.content).toMatch(/\[… \d+ messages omitted …\]/);
  });

  it('never mutates the context it was given', async () => {
    const context = history().map((m) => Object.freeze(m));
    Object.freeze(context);
    const before = JSON.stringify(context);
    await compressContext(input(new ScriptedLlm([{ content: 's' }]), context, { budgetTokens: 128 }));
    expect(JSON.stringify(context)).toBe(before);
  });
});

describe('compressContext: retries and hard truncation', () => {
  it('retries an empty summary', async () => {
    const llm = new ScriptedLlm([{ content: '   ' }, { content: 'real summary' }]);
    const res = await compressContext(input(llm, history()));
    expect(res.attempts).toBe(2);
    expect(res.method).toBe('summary');
    expect(res.summary).toBe('real summary');
  });

  it.each([0, 1, 2, 3])('with retries=%i, makes retries+1 attempts, then hard-truncates', async (retries) => {
    const llm = new ScriptedLlm(() => fail());
    const context = history();
    const res = await compressContext(input(llm, context, { retries }));
    expect(llm.requests).toHaveLength(retries + 1);
    expect(res.attempts).toBe(retries + 1);
    expect(res.method).toBe('hard_truncation');
    expect(res.lastError).toMatch(/unreachable/);
    expect(res.replaced).toEqual(context.slice(0, context.length - 4));
  });

  it('defaults to 2 retries', async () => {
    const llm = new ScriptedLlm(() => fail());
    await compressContext(input(llm, history()));
    expect(llm.requests).toHaveLength(3);
  });

  it('keeps a mechanical digest: first request, tools called, last reply', async () => {
    const res = await compressContext(input(new ScriptedLlm(() => fail()), history()));
    expect(res.summary).toContain('First request:\nfix the failing test in src/a.ts');
    expect(res.summary).toMatch(/Tools called: read_file, shell, write_file/);
    expect(res.summary).toContain('Last assistant reply:\ndone: now update the README');
    expect(res.context[0]?.content).toContain(res.summary);
    expect(wellFormedProblems(res.context)).toEqual([]);
  });

  it('counts repeated tools in the digest', async () => {
    const context = [...exchange('a', ['shell', 'shell']), ...exchange('b', ['shell']), user('c'), reply('d'), user('e'), reply('f')];
    const res = await compressContext(input(new ScriptedLlm(() => fail()), context));
    expect(res.summary).toContain('Tools called: shell ×3');
  });
});

describe('compressContext: safety net', () => {
  it('cuts the longest kept messages until the context fits', async () => {
    const huge = result('shell', text(30_000));
    const context = [...exchange('build it', ['shell']), user('check the log'), call('shell'), huge];
    const res = await compressContext(input(new ScriptedLlm([{ content: 'summary' }]), context, { keepRecent: 3, budgetTokens: 1000 }));
    expect(res.safetyNet).toBe(true);
    expect(res.tokensAfter).toBeLessThanOrEqual(1000);
    const last = res.context[res.context.length - 1];
    expect(last?.role).toBe('tool');
    expect(last?.content).toMatch(/\[…truncated ~\d+ tokens…\]/);
    // The original is archived: it is no longer in the context verbatim.
    expect(res.replaced).toContain(huge);
    expect(wellFormedProblems(res.context)).toEqual([]);
  });

  it('drops whole groups, and says so, when cutting is not enough', async () => {
    const context = [
      ...exchange('one', ['shell']),
      user('two'),
      call('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'),
      ...'abcdefgh'.split('').map((n) => result(n, text(4000))),
      user('three'),
      call('x'),
      result('x', text(4000)),
    ];
    const res = await compressContext(input(new ScriptedLlm([{ content: text(2000) }]), context, { keepRecent: 13, budgetTokens: 128 }));
    expect(res.safetyNet).toBe(true);
    expect(res.tokensAfter).toBeLessThanOrEqual(128);
    expect(res.context[0]?.content).toMatch(/\[\d+ later messages were dropped to fit the context window\]/);
    expect(wellFormedProblems(res.context)).toEqual([]);
  });

  it('always fits, whatever the budget', async () => {
    for (const budget of [128, 200, 400, 800, 1600]) {
      const context = Array.from({ length: 8 }, (_, i) => exchange(`t${i}`, ['shell', 'read_file'], text(3000 + i * 500))).flat();
      const res = await compressContext(input(new ScriptedLlm(() => fail()), context, { budgetTokens: budget, keepRecent: 10 }));
      expect(res.tokensAfter, `budget ${budget}`).toBeLessThanOrEqual(budget);
      expect(wellFormedProblems(res.context), `budget ${budget}`).toEqual([]);
    }
  });
});

describe('compressContext: abort and nothing to compact', () => {
  it('propagates an abort during the summariser call, without retrying', async () => {
    const llm = new ScriptedLlm([{ hang: true }, { content: 'never' }]);
    const ctl = new AbortController();
    const p = compressContext(input(llm, history(), { signal: ctl.signal }));
    // Aborted while the summariser call hangs.
    await vi.waitFor(() => expect(llm.requests).toHaveLength(1), { timeout: 20_000 });
    ctl.abort();
    await expect(p).rejects.toMatchObject({ name: 'AbortError' });
    expect(llm.requests).toHaveLength(1);
  });

  it('does not call the model when already aborted', async () => {
    const llm = new ScriptedLlm([{ content: 's' }]);
    await expect(compressContext(input(llm, history(), { signal: AbortSignal.abort() }))).rejects.toMatchObject({ name: 'AbortError' });
    expect(llm.requests).toHaveLength(0);
  });

  it('treats a failure while the signal is aborted as the abort (no hard truncation)', async () => {
    const ctl = new AbortController();
    const llm = new ScriptedLlm(() => {
      ctl.abort();
      return fail();
    });
    await expect(compressContext(input(llm, history(), { signal: ctl.signal }))).rejects.toMatchObject({ name: 'AbortError' });
    expect(llm.requests).toHaveLength(1);
  });

  it('rethrows an AbortError from the client even if the signal did not fire', async () => {
    const llm = new ScriptedLlm([{ error: new DOMException('stopped', 'AbortError') }, { content: 'never' }]);
    await expect(compressContext(input(llm, history()))).rejects.toMatchObject({ name: 'AbortError' });
    expect(llm.requests).toHaveLength(1);
  });

  it.each([
    ['empty context', []],
    ['one exchange', [user('hi'), reply('hello')]],
  ])('throws NothingToCompactError (exit 1) for %s, without calling the model', async (_name, context) => {
    const llm = new ScriptedLlm([{ content: 's' }]);
    const err: unknown = await compressContext(input(llm, context)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NothingToCompactError);
    expect(err).toMatchObject({ status: 'error', code: 'nothing_to_compact', exitCode: 1 });
    expect((err as Error).message).toMatch(/nothing to compact/);
    expect(llm.requests).toHaveLength(0);
  });
});

describe('the task of the turn (issue 17 point 5)', () => {
  it('stays verbatim after the summary, through repeated compressions, and is never archived as replaced', async () => {
    const task = user('Port the parser to the new API; keep the old names as aliases.');
    const work = (n: number): ChatMessage[] => Array.from({ length: n }, (_, i) => [call('read_file'), result('read_file', text(2000 + i))]).flat();
    const llm = new ScriptedLlm(() => ({ content: 'Read several files.' }));
    const first = await compressContext(input(llm, [task, ...work(6)], { pinned: task, budgetTokens: 2000 }));
    expect(first.context.filter((m) => m === task)).toHaveLength(1);
    expect(first.replaced).not.toContain(task);
    // Summary, acknowledgement (the task is a user turn), the task, then the kept work.
    expect(first.context.slice(0, 3).map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(isSummaryMessage(first.context[0] as ChatMessage)).toBe(true);
    expect(first.context[2]).toBe(task);
    const second = await compressContext(input(llm, [...first.context, ...work(6)], { pinned: task, budgetTokens: 2000 }));
    expect(second.context).toContain(task);
    expect(second.replaced).not.toContain(task);
    expect(wellFormedProblems(second.context)).toEqual([]);
  });
});
