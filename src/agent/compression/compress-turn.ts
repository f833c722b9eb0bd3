/**
 * Compression inside a turn (seeds 000/001): pre-turn, mid-turn and post-turn, when the
 * estimate reaches 80% of num_ctx and there is something to compress. Returns the new context
 * and the archive of what it replaced; the driver stores both in one transaction
 * (`TurnState.applyCompression`; sub-agents, context in memory only, compress in memory).
 */
import type { AgentDeps } from '../agent-types.js';
import type { AgentEvent } from '../events.js';
import { charsToTokens } from '../tokens.js';
import type { CompressionChange, TurnState } from '../turn-state.js';
import { loadCompressionPrompt, renderCompressionPrompt } from './prompt.js';
import { wouldCompress } from './select.js';
import { compressContext } from './summarize.js';
import { compressionBudget, compressionSettings, shouldCompress } from './thresholds.js';

export type CompressionReason = CompressionChange['reason'];

/**
 * Compresses the turn's context when due (or always, for `manual`): yields
 * `compression_started`, then returns the change for the driver to apply
 * (`TurnState.applyCompression`); null when nothing is due or nothing can be compressed.
 */
export async function* compressTurn(turn: TurnState, deps: AgentDeps, reason: CompressionReason): AsyncGenerator<AgentEvent, CompressionChange | null> {
  const settings = compressionSettings(turn.profile);
  const estimate = turn.estimate();
  // The budget, not num_ctx: after an overflow refusal it is the context the server really has.
  if (reason !== 'manual' && !shouldCompress(estimate, turn.contextBudget)) return null;
  // The message that started the turn is never summarised (select.ts).
  const pinned = turn.taskMessage ?? undefined;
  if (!wouldCompress(turn.context, settings.keepRecent, pinned !== undefined ? { pinned } : {})) return null;
  yield { type: 'compression_started', reason, estimated_tokens: estimate };
  const overhead = charsToTokens(turn.fixedRequestChars());
  const template = await loadCompressionPrompt(settings.promptFile);
  const result = await compressContext({
    llm: deps.llm,
    model: turn.model,
    numCtx: turn.numCtx,
    keepAlive: turn.settings.keepAlive,
    windowTokens: turn.contextBudget,
    signal: turn.signal,
    context: turn.context,
    keepRecent: settings.keepRecent,
    maxSummaryTokens: settings.maxSummaryTokens,
    promptText: renderCompressionPrompt(template, settings.maxSummaryTokens),
    budgetTokens: compressionBudget(turn.contextBudget, overhead),
    ...(pinned !== undefined ? { pinned } : {}),
  });
  const events: AgentEvent[] = [];
  if (result.method === 'hard_truncation') {
    events.push({
      type: 'warning',
      code: 'compression_fallback',
      message: `the model could not summarise the conversation (${result.lastError ?? 'no summary'}); older messages were truncated instead`,
    });
  }
  return {
    reason,
    context: result.context,
    archive: { summary: result.summary, messages: result.replaced, tokensBefore: result.tokensBefore, tokensAfter: result.tokensAfter },
    messagesBefore: turn.context.length,
    events,
  };
}
