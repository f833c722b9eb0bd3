/**
 * Context compression (seeds 000/001, SPEC §8): when to compress, what to keep, the summary,
 * the fallbacks that make the result always fit, and per-request view truncation.
 */
export { NothingToCompactError } from './errors.js';
export { DEFAULT_PROMPT_FILE, loadCompressionPrompt, renderCompressionPrompt } from './prompt.js';
export { fitToBudget, type FitResult } from './safety-net.js';
export { selectForCompression, wouldCompress, type CompressionSelection, type SelectOptions } from './select.js';
export { headTail, shrinkMessage, truncationMarker } from './shrink.js';
export { compressContext, type CompressionInput, type CompressionResult } from './summarize.js';
export { isSummaryAck, isSummaryMessage, SUMMARY_ACK, summaryHeader } from './summary-message.js';
export {
  COMPRESSION_DEFAULTS,
  COMPRESSION_RATIO,
  compressionBudget,
  compressionSettings,
  contextTokens,
  MIN_BUDGET_TOKENS,
  MIN_KEEP_RECENT,
  shouldCompress,
  summaryTokenCap,
  TARGET_RATIO,
  type CompressionProfile,
  type CompressionSettings,
} from './thresholds.js';
export { truncateForView, viewBudget } from './view-truncation.js';
