/**
 * What events show of tool calls: long outputs and long string arguments (a `write_file` with
 * megabytes of content) are shortened head + tail, so one call cannot make the event stream
 * megabytes long. The model and the database keep everything whole.
 */

/** Tool output shown in a `tool_call` event; the model still gets the registry's larger cap. */
export const EVENT_OUTPUT_CHARS = 16_384;

/** Tool output for a `tool_call` event: head and tail once it passes EVENT_OUTPUT_CHARS. */
export function capForEvent(text: string): { output: string; truncated: boolean } {
  if (text.length <= EVENT_OUTPUT_CHARS) return { output: text, truncated: false };
  const half = EVENT_OUTPUT_CHARS / 2;
  return { output: `${text.slice(0, half)}\n[… ${text.length - EVENT_OUTPUT_CHARS} chars omitted …]\n${text.slice(-half)}`, truncated: true };
}

/** Longest string argument shown whole in `tool_started` / `tool_call` events. */
const EVENT_ARG_CHARS = 4_096;

/**
 * Tool arguments for an event: long strings (a `write_file` with megabytes of content) are
 * shortened head + tail, so one call cannot make the event stream megabytes long. The model
 * and the database keep the arguments whole.
 */
export function capArgsForEvent(args: unknown): unknown {
  if (typeof args === 'string') {
    if (args.length <= EVENT_ARG_CHARS) return args;
    const half = EVENT_ARG_CHARS / 2;
    return `${args.slice(0, half)}[… ${args.length - EVENT_ARG_CHARS} chars omitted …]${args.slice(-half)}`;
  }
  if (Array.isArray(args)) return args.map(capArgsForEvent);
  if (typeof args === 'object' && args !== null) {
    return Object.fromEntries(Object.entries(args).map(([k, v]) => [k, capArgsForEvent(v)]));
  }
  return args;
}

