/**
 * How many tokens a call's reply may take (`options.num_predict`). Without a bound Ollama lets a
 * reply run to 10 × num_ctx (llm/llama_server.go 79, 106-118: num_predict -1), and when it
 * reaches the end of the window llama-server's context shift (on by default, sched.go 129-147)
 * discards half of it after the first `num_keep` tokens and goes on: the system prompt and tool
 * schemas are gone mid-reply, navi never sees `done_reason: "length"`, and the next call's
 * cached prefix is lost. Bounded, a reply that fills the window ends with "length" instead.
 * The bound may change on every call: `num_predict` is a per-request option, not one of the
 * runner's (api/types.go `Runner`), so a new value never reloads the model (sched.go needsReload).
 */

/**
 * Tokens kept free between the prompt estimate and the end of the window: the estimate counts
 * characters (~4 per token) and misses the template's own tokens, so it can fall short.
 */
export const REPLY_MARGIN_TOKENS = 256;

/**
 * The least a reply is allowed even when the estimate says the window is (nearly) full: the
 * estimate may be high, and a bound of a few tokens would only turn every call into "length".
 */
export const MIN_REPLY_TOKENS = 512;

export interface ReplyBoundInput {
  /** The window the request is sent with (`num_ctx`). */
  numCtx: number;
  /** The estimated prompt size in tokens (the whole request: system, tools, history). */
  promptTokens: number;
  /** The most any one reply may take, whatever room is left (a setting); absent: no cap but the window. */
  cap?: number;
}

/**
 * `min(cap, num_ctx − prompt − margin)`, never below MIN_REPLY_TOKENS (nor above the cap or the
 * window). Integer, as Ollama's `num_predict` is.
 */
export function replyTokenBound({ numCtx, promptTokens, cap }: ReplyBoundInput): number {
  const window = Math.max(1, Math.floor(numCtx));
  const limit = cap !== undefined && cap > 0 ? Math.min(Math.floor(cap), window) : window;
  const room = Math.floor(window - Math.max(0, promptTokens) - REPLY_MARGIN_TOKENS);
  return Math.max(Math.min(MIN_REPLY_TOKENS, limit), Math.min(limit, room));
}
