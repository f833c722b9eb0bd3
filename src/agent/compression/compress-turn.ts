/**
 * Compression inside a turn (seeds 000/001): pre-turn, mid-turn and post-turn, when the
 * estimate reaches 80% of num_ctx and there is something to compress. The new context and
 * the archive of what it replaced are written in one transaction; sub-agents (context in
 * memory only) compress in memory.
 */
import type { AgentDeps } from '../agent-types.js';
import type { AgentEvent } from '../events.js';
import { charsToTokens } from '../tokens.js';
import type { Turn } from '../turn.js';
import { loadCompressionPrompt, renderCompressionPrompt } from './prompt.js';
import { wouldCompress } from './select.js';
import { compressContext } from './summarize.js';
import { compressionBudget, compressionSettings, shouldCompress } from './thresholds.js';

export type CompressionReason = 'preturn' | 'midturn' | 'postturn' | 'manual';

export async function* compressTurn(turn: Turn, deps: AgentDeps, reason: CompressionReason): AsyncGenerator<AgentEvent, void> {
  const settings = compressionSettings(turn.profile);
  const estimate = turn.estimate();
  if (reason !== 'manual' && !shouldCompress(estimate, turn.numCtx)) return;
  if (!wouldCompress(turn.context, settings.keepRecent)) return;
  yield { type: 'compression_started', reason, estimated_tokens: estimate };
  const overhead = charsToTokens(turn.fixedRequestChars());
  const template = await loadCompressionPrompt(settings.promptFile);
  const before = turn.context.length;
  const result = await compressContext({
    llm: deps.llm,
    model: turn.model,
    numCtx: turn.numCtx,
    keepAlive: turn.opts.keepAlive,
    signal: turn.opts.signal,
    context: turn.context,
    keepRecent: settings.keepRecent,
    maxSummaryTokens: settings.maxSummaryTokens,
    promptText: renderCompressionPrompt(template, settings.maxSummaryTokens),
    budgetTokens: compressionBudget(turn.numCtx, overhead),
  });
  if (!turn.isSubagent) {
    // Queued behind earlier appends, so the replace sees every message written so far.
    turn.writer.enqueue((s) =>
      s.archives.compactContext(turn.sessionId, result.context, {
        reason,
        summary: result.summary,
        messages: result.replaced,
        tokensBefore: result.tokensBefore,
        tokensAfter: result.tokensAfter,
      }),
    );
    await turn.writer.flush();
  }
  turn.replaceContext(result.context);
  yield { type: 'context_compressed', messages_before: before, messages_after: result.context.length, estimated_tokens_after: turn.estimate() };
  if (result.method === 'hard_truncation') {
    yield {
      type: 'warning',
      code: 'compression_fallback',
      message: `the model could not summarise the conversation (${result.lastError ?? 'no summary'}); older messages were truncated instead`,
    };
  }
}
