/**
 * The issue-3 target: compression keeps every request under num_ctx over a 500-turn scripted
 * session. The functions are applied the way the agent applies them — estimate the request
 * (system prompt + view-truncated context, chars/3), and when shouldCompress + wouldCompress,
 * compressContext, then continue — pre-turn, mid-turn (before every further call) and
 * post-turn, with a small num_ctx so compression fires over and over.
 */
import { describe, expect, it } from 'vitest';
import {
  compressContext,
  compressionBudget,
  contextTokens,
  DEFAULT_PROMPT_FILE,
  loadCompressionPrompt,
  shouldCompress,
  summaryTokenCap,
  truncateForView,
  viewBudget,
  wouldCompress,
  type CompressionResult,
} from '../../src/agent/compression/index.js';
import { LlmUnavailableError } from '../../src/errors.js';
import type { ChatMessage } from '../../src/llm/types.js';
import { ScriptedLlm, type ScriptedResponder } from '../support/scripted-llm.js';
import { prng, reply, result, text, user, wellFormedProblems } from './helpers.js';

const NUM_CTX = 4096;
const TURNS = 500;
/** Persona + profile prompt + tool schemas stand in: ~500 tokens of every request. */
const SYSTEM: ChatMessage = { role: 'system', content: text(1500, 'S') };
const TOOLS = ['shell', 'read_file', 'write_file', 'search_files', 'list_dir'] as const;

interface Run {
  requests: number;
  maxRequestTokens: number;
  compressions: number;
  methods: Record<CompressionResult['method'], number>;
  safetyNets: number;
  maxSummariserRequestTokens: number;
  /** Requests over num_ctx or malformed, described. */
  problems: string[];
}

interface SimOptions {
  numCtx?: number;
  /**
   * `view`: the request as sent (what a real prompt_eval_count measures); `stored`: the stored
   * context before view truncation — more pessimistic, compresses more often; both must fit.
   */
  estimateFrom?: 'view' | 'stored';
}

async function simulate(responder: ScriptedResponder, seed: number, opts: SimOptions = {}): Promise<Run> {
  const numCtx = opts.numCtx ?? NUM_CTX;
  const rnd = prng(seed);
  const llm = new ScriptedLlm(responder);
  const promptText = await loadCompressionPrompt(DEFAULT_PROMPT_FILE);
  const signal = new AbortController().signal;
  const keepRecent = 10;
  const overhead = contextTokens([SYSTEM]);
  const budgetTokens = compressionBudget(numCtx, overhead);
  const perMessage = viewBudget(numCtx, 0);
  const run: Run = { requests: 0, maxRequestTokens: 0, compressions: 0, methods: { summary: 0, hard_truncation: 0 }, safetyNets: 0, maxSummariserRequestTokens: 0, problems: [] };
  let context: ChatMessage[] = [];

  const maybeCompress = async (where: string): Promise<void> => {
    const estimate = overhead + contextTokens(opts.estimateFrom === 'stored' ? context : truncateForView(context, perMessage));
    if (!shouldCompress(estimate, numCtx) || !wouldCompress(context, keepRecent)) return;
    const res = await compressContext({ llm, model: 'm', numCtx, signal, context, keepRecent, maxSummaryTokens: 1024, promptText, budgetTokens });
    if (res.tokensAfter > budgetTokens) run.problems.push(`${where}: compressed to ${res.tokensAfter} > budget ${budgetTokens}`);
    context = res.context;
    run.compressions++;
    run.methods[res.method]++;
    if (res.safetyNet) run.safetyNets++;
  };
  const send = (where: string, lastResults: readonly ChatMessage[]): void => {
    const request = [SYSTEM, ...truncateForView(context, perMessage)];
    const tokens = contextTokens(request);
    run.requests++;
    run.maxRequestTokens = Math.max(run.maxRequestTokens, tokens);
    if (tokens > numCtx) run.problems.push(`${where}: request of ${tokens} tokens > num_ctx ${numCtx}`);
    for (const p of wellFormedProblems(request)) run.problems.push(`${where}: ${p}`);
    // The results the model is about to read are never summarised away.
    const tail = request.slice(request.length - lastResults.length);
    if (tail.some((m, i) => m.role !== 'tool' || m.tool_name !== lastResults[i]?.tool_name)) run.problems.push(`${where}: latest tool results missing`);
  };
  const toolOutput = (): string => {
    const r = rnd(100);
    // Mostly small results, some medium, one in ten far larger than the whole window.
    const size = r < 60 ? 20 + rnd(800) : r < 90 ? 800 + rnd(4000) : 5000 + rnd(40_000);
    return text(size, `o${r}`);
  };

  for (let turn = 0; turn < TURNS; turn++) {
    context.push(user(text(20 + rnd(400), `u${turn}`)));
    await maybeCompress(`turn ${turn} pre`);
    let lastResults: ChatMessage[] = [];
    const iterations = rnd(4);
    for (let it = 0; it < iterations; it++) {
      send(`turn ${turn} call ${it}`, lastResults);
      const names = Array.from({ length: 1 + rnd(3) }, () => TOOLS[rnd(TOOLS.length)] ?? 'shell');
      context.push({
        role: 'assistant',
        content: rnd(2) === 0 ? '' : text(50 + rnd(300), 'think'),
        tool_calls: names.map((name, i) => ({
          id: `call_${turn}_${it}_${i}`,
          name,
          arguments: name === 'write_file' ? { path: `src/f${turn}.ts`, content: text(rnd(8000), 'W') } : { path: `src/f${turn}.ts` },
        })),
      });
      lastResults = names.map((name) => result(name, toolOutput()));
      context.push(...lastResults);
      await maybeCompress(`turn ${turn} mid ${it}`);
    }
    send(`turn ${turn} final`, lastResults);
    context.push(reply(text(20 + rnd(1500), `a${turn}`)));
    await maybeCompress(`turn ${turn} post`);
  }
  // The summariser's own request leaves room for the summary it is asked to write.
  const answerRoom = summaryTokenCap(1024, budgetTokens);
  for (const req of llm.requests) run.maxSummariserRequestTokens = Math.max(run.maxSummariserRequestTokens, contextTokens(req.messages) + answerRoom);
  return run;
}

describe(`${TURNS}-turn scripted session at num_ctx ${NUM_CTX}`, () => {
  it('a summariser that answers: every request fits', async () => {
    const run = await simulate((_req, i) => ({ content: `Task: keep working. Summary #${i}. ${text(100 + (i % 7) * 80, 'sum')}` }), 1);
    expect(run.problems).toEqual([]);
    expect(run.maxRequestTokens).toBeLessThanOrEqual(NUM_CTX);
    expect(run.maxSummariserRequestTokens).toBeLessThanOrEqual(NUM_CTX);
    expect(run.compressions).toBeGreaterThan(100);
    expect(run.methods.hard_truncation).toBe(0);
  });

  it('a summariser that always fails: hard truncation, every request still fits', async () => {
    const run = await simulate(() => ({ error: new LlmUnavailableError('unreachable', 'Ollama is unreachable') }), 2);
    expect(run.problems).toEqual([]);
    expect(run.maxRequestTokens).toBeLessThanOrEqual(NUM_CTX);
    expect(run.compressions).toBeGreaterThan(100);
    expect(run.methods.summary).toBe(0);
  });

  it('a summariser that rambles far past its cap: cut, every request still fits', async () => {
    const run = await simulate(() => ({ content: text(8000, 'ramble') }), 3);
    expect(run.problems).toEqual([]);
    expect(run.maxRequestTokens).toBeLessThanOrEqual(NUM_CTX);
    expect(run.maxSummariserRequestTokens).toBeLessThanOrEqual(NUM_CTX);
    expect(run.compressions).toBeGreaterThan(100);
  });

  it('estimating from the stored context (before view truncation): every request fits', async () => {
    const run = await simulate((_req, i) => ({ content: `Summary #${i}.` }), 4, { estimateFrom: 'stored' });
    expect(run.problems).toEqual([]);
    expect(run.maxRequestTokens).toBeLessThanOrEqual(NUM_CTX);
    expect(run.compressions).toBeGreaterThan(100);
  });
});

describe(`${TURNS}-turn scripted session at num_ctx 32768`, () => {
  it('compresses now and then, and every request fits', async () => {
    const run = await simulate((_req, i) => ({ content: `Task: keep working. Summary #${i}. ${text(2000, 'sum')}` }), 5, { numCtx: 32768 });
    expect(run.problems).toEqual([]);
    expect(run.maxRequestTokens).toBeLessThanOrEqual(32768);
    expect(run.maxSummariserRequestTokens).toBeLessThanOrEqual(32768);
    expect(run.compressions).toBeGreaterThan(5);
  });
});
