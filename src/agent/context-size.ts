/**
 * What a turn says when its request does not fit the model's context window: the sizes (the
 * estimate, the num_ctx sent, the model's trained context when known) and what to do. "No
 * longer fits" only when it once did: a first request that never fit is the prompt's size.
 */

export interface ContextSizes {
  /** Estimated prompt tokens of the request (chars/3, or the last real count plus what was added). */
  estimate: number;
  /** num_ctx sent (already lowered to the model's context length). */
  numCtx: number;
  /** The model's trained context length from /api/show, when the server said. */
  contextLength?: number;
  /** The window the server showed it really has (an overflow refusal), when smaller than num_ctx. */
  serverWindow?: number;
}

function sizes({ estimate, numCtx, contextLength, serverWindow }: ContextSizes): string {
  const server = serverWindow !== undefined && serverWindow < numCtx ? `, the server's window ${serverWindow}` : '';
  return `about ${estimate} tokens; num_ctx ${numCtx}${contextLength !== undefined ? `, model context ${contextLength}` : ''}${server}`;
}

/** The window can grow only up to the model's trained context (Ollama clamps num_ctx there). */
function raiseHint({ numCtx, contextLength }: ContextSizes): string {
  if (contextLength === undefined) return 'raise llm.num_ctx if the model supports a larger context';
  if (numCtx < contextLength) return `raise llm.num_ctx (up to the model's ${contextLength})`;
  return 'use a model with a larger context';
}

/** The prompt itself is larger than the window: refused before anything is stored. */
export function promptTooLargeMessage(s: ContextSizes): string {
  return `The prompt does not fit the model's context window (${sizes(s)}). Shorten it (or put the material in a file and ask the agent to read the parts it needs), or ${raiseHint(s)}.`;
}

/**
 * The request of a turn does not fit: `neverFit` when it is the turn's first request of a new
 * conversation (it never fit), otherwise the conversation grew past the window.
 */
export function contextTooLargeMessage(s: ContextSizes, neverFit: boolean): string {
  if (neverFit) return `The request does not fit the model's context window (${sizes(s)}). Shorten the prompt, or ${raiseHint(s)}.`;
  return `The conversation no longer fits the model's context window (${sizes(s)}). Start a new session, or ${raiseHint(s)}.`;
}
