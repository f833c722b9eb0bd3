/**
 * When to compress and how much room the result may take. All pure; the agent feeds in its
 * own estimate (last real prompt_eval_count + chars/3 of what was added since).
 */
import { resolve } from 'node:path';
import type { ChatMessage } from '../../llm/types.js';
import type { ProfileSettings } from '../../profiles/types.js';
import { charsToTokens, messageChars } from '../tokens.js';
import { DEFAULT_PROMPT_FILE } from './prompt.js';

/** Compress at 80% of num_ctx (seeds 000/001): late enough to be rare, early enough that the next request still fits. */
export const COMPRESSION_RATIO = 0.8;

/** After compressing, the context aims at half the window, so several turns fit before the next compression. */
export const TARGET_RATIO = 0.5;

/** keep_recent may shrink to this when nothing older is left to summarise: the latest exchange stays verbatim. */
export const MIN_KEEP_RECENT = 2;

/** No budget below this: the summary header, a few lines and one truncated message must still fit. */
export const MIN_BUDGET_TOKENS = 128;

/** A summary smaller than this is too short to carry the task and the state of the work. */
const MIN_SUMMARY_TOKENS = 64;

/** True when the estimated request size has reached 80% of num_ctx. */
export function shouldCompress(estimatedTokens: number, numCtx: number): boolean {
  return numCtx > 0 && estimatedTokens >= numCtx * COMPRESSION_RATIO;
}

/** The per-profile compression settings, resolved. */
export interface CompressionSettings {
  /** Most recent messages kept verbatim (the boundary may move earlier to keep a tool group whole). */
  keepRecent: number;
  /** Upper bound on the summary's size, in tokens. */
  maxSummaryTokens: number;
  /** Absolute path of the summariser prompt file. */
  promptFile: string;
}

/** Values used when a profile sets no override. */
export const COMPRESSION_DEFAULTS: CompressionSettings = {
  // Ten messages is about two tool-using exchanges: enough for the model to see what it just did.
  keepRecent: 10,
  // ~3 KB of notes: room for task, decisions, paths and open items without crowding small windows.
  maxSummaryTokens: 1024,
  promptFile: DEFAULT_PROMPT_FILE,
};

/** What `compressionSettings` reads from a profile (a loaded `Profile` fits). */
export interface CompressionProfile {
  /** The profile directory; `compression_prompt_file` is relative to it. */
  dir?: string;
  settings: Pick<ProfileSettings, 'compression_keep_recent' | 'compression_max_tokens' | 'compression_prompt_file'>;
}

/**
 * The profile's overrides (`compression_keep_recent`, `compression_max_tokens`,
 * `compression_prompt_file` relative to the profile directory) over `defaults`.
 */
export function compressionSettings(profile: CompressionProfile, defaults: CompressionSettings = COMPRESSION_DEFAULTS): CompressionSettings {
  const s = profile.settings;
  return {
    keepRecent: s.compression_keep_recent ?? defaults.keepRecent,
    maxSummaryTokens: s.compression_max_tokens ?? defaults.maxSummaryTokens,
    promptFile: s.compression_prompt_file !== undefined ? resolve(profile.dir ?? '.', s.compression_prompt_file) : defaults.promptFile,
  };
}

/**
 * Tokens the compressed context may take: half of num_ctx minus what every request adds on
 * top of the context (system prompt, tool schemas, memory message), never below
 * MIN_BUDGET_TOKENS.
 */
export function compressionBudget(numCtx: number, overheadTokens = 0): number {
  return Math.max(MIN_BUDGET_TOKENS, Math.floor(numCtx * TARGET_RATIO) - overheadTokens);
}

/**
 * The summary's effective cap: `maxSummaryTokens`, but at most half the budget, so a profile's
 * generous cap on a small window still leaves room for the messages kept verbatim.
 */
export function summaryTokenCap(maxSummaryTokens: number, budgetTokens: number): number {
  return Math.max(1, Math.min(maxSummaryTokens, Math.max(MIN_SUMMARY_TOKENS, Math.floor(budgetTokens / 2))));
}

/** Estimated tokens of `messages` (chars/3 of what they contribute to a request). */
export function contextTokens(messages: readonly ChatMessage[]): number {
  let chars = 0;
  for (const m of messages) chars += messageChars(m);
  return charsToTokens(chars);
}
