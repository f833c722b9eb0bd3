/**
 * How the fake Ollama honours a chat request's `format` (structured outputs), as the real server
 * does (github.com/ollama/ollama):
 * - api/types.go ChatRequest.Format is a json.RawMessage; llm/llama_server.go Completion accepts
 *   `null` / `""` (not set), `"json"` (a JSON grammar) or a JSON object (a JSON Schema passed to
 *   llama-server as `json_schema`); anything else fails the completion with
 *   `invalid format: %q; expected "json" or a valid JSON Schema object`, which ChatHandler sends
 *   as `{"error": …}` and streamResponse answers with HTTP 500 when nothing was written yet.
 * - server/routes.go ChatHandler constrains the reply from its first token, unless the model has
 *   the `thinking` capability and is thinking: then the reasoning streams unconstrained and, the
 *   moment content begins, the server cancels and restarts the completion with the format and
 *   the thinking so far (structuredOutputsState_ReadyToApply → _Applying). `think: false` on a
 *   thinking model applies it at once (forceImmediate).
 * So a constrained reply is JSON (what the grammar produces), and a tool call can only come from
 * a thinking model before any content. The fake cannot generate a reply in the schema's shape;
 * a scripted turn the real server could not have produced is recorded in `fake.mismatches`,
 * so a test that scripts an impossible reply fails instead of testing fiction. Keywords the
 * grammar does not enforce (`uniqueItems`, `multipleOf`, `not`…) are the script's to honour or
 * break — a real model's answer can break them too, which is why navi checks with ajv.
 */
import type { FakeTurn } from './fake-ollama-script.js';

export type FormatMode = 'none' | 'json';

/** `format` as llm/llama_server.go reads it: none, constrained JSON, or the error it returns. */
export function formatOf(body: Record<string, unknown> | undefined): { mode: FormatMode } | { error: string } {
  if (body === undefined || !('format' in body)) return { mode: 'none' };
  const value = body.format;
  if (value === null || value === '') return { mode: 'none' };
  if (value === 'json') return { mode: 'json' };
  if (typeof value === 'object' && !Array.isArray(value)) return { mode: 'json' };
  // %q of the raw bytes: a Go-quoted string of the JSON text the client sent.
  return { error: `invalid format: ${JSON.stringify(JSON.stringify(value))}; expected "json" or a valid JSON Schema object` };
}

/** Whether the constraint waits for the thinking to end (server/routes.go ChatHandler). */
export function constrainsAfterThinking(capabilities: readonly string[], think: unknown): boolean {
  return capabilities.includes('thinking') && think !== false && think !== 'false';
}

/** Why the real server could not have produced `turn` under a `format`, or undefined. */
export function formatMismatch(turn: FakeTurn, afterThinking: boolean): string | undefined {
  const parts = turn.lines ?? [{ thinking: turn.thinking, content: turn.content }];
  const content = parts.map((p) => p.content ?? '').join('');
  const thinking = parts.map((p) => p.thinking ?? '').join('');
  const calls = turn.tool_calls?.length ?? 0;
  if (!afterThinking && thinking !== '') return 'format constrains the reply from its first token (no thinking): scripted thinking cannot be produced';
  if (calls > 0 && (!afterThinking || content !== '')) return 'format constrains the reply once content begins: a scripted tool call cannot be produced';
  if (content === '' && calls === 0 && turn.http_status === undefined && turn.error_line === undefined) return 'format: the constrained reply is JSON, not empty';
  if (content !== '') {
    try {
      JSON.parse(content);
    } catch {
      return `format: the constrained reply is JSON, scripted content is not: ${content.slice(0, 80)}`;
    }
  }
  return undefined;
}
