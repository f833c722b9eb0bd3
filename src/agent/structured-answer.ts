/**
 * `--output-schema`: the final answer as JSON that matches a schema (the convention of
 * `codex exec --output-schema`). The tool loop runs as usual, without `format`: Ollama
 * constrains the whole reply to the grammar, so a model asked with `format` from the first call
 * could never call a tool (server/routes.go ChatHandler applies `format` at once unless a
 * thinking model is still reasoning). Once the model has answered, it is asked once more — same
 * system message and tools, so the server's prompt cache still holds — with the schema as
 * Ollama's `format`, and the reply is parsed and checked (ajv). The grammar does not enforce
 * every keyword (`minimum`, `pattern`…), so an answer that does not match is asked for again
 * once, with the problems listed, before the run fails.
 */
import type { ChatMessage } from '../llm/types.js';
import { fillPrompt, loadPrompt } from '../prompts.js';
import type { OutputSchema } from './agent-types.js';
import type { AgentEvent } from './events.js';
import type { ModelCallOutcome } from './model-call.js';

/** Attempts at a matching answer: the first, and one retry (issue 11). */
export const STRUCTURED_ATTEMPTS = 2;

/** What the turn lends the structured step. */
export interface StructuredHost {
  /** One model call with `format`; `note` travels in the last message only (never stored). */
  ask(format: Record<string, unknown>, note: string | undefined): AsyncGenerator<AgentEvent, ModelCallOutcome>;
  /** Adds a message to the model's view and the stored session. */
  keep(message: ChatMessage): void;
}

export type StructuredResult =
  | { kind: 'ok'; text: string; value: unknown }
  | { kind: 'mismatch'; text: string; errors: string[] }
  | { kind: 'interrupted' };

/** Asks for the final answer in the schema's shape; at most `STRUCTURED_ATTEMPTS` calls. */
export async function* structuredAnswer(host: StructuredHost, output: OutputSchema): AsyncGenerator<AgentEvent, StructuredResult> {
  // Stored: a continued session (`-c`) shows why the last answer is JSON.
  host.keep({ role: 'user', content: fillPrompt(loadPrompt('agent/output-schema.md'), { schema: JSON.stringify(output.schema, null, 2) }) });
  let note: string | undefined;
  let last: { text: string; errors: string[] } = { text: '', errors: [] };
  for (let attempt = 0; attempt < STRUCTURED_ATTEMPTS; attempt++) {
    const outcome = yield* host.ask(output.schema, note);
    if (outcome.kind === 'interrupted') return { kind: 'interrupted' };
    const text = outcome.reply.content;
    const parsed = parseAnswer(text, outcome.reply.calls.length);
    const errors = parsed.ok ? output.check(parsed.value) : [parsed.error];
    if (parsed.ok && errors.length === 0) {
      host.keep({ role: 'assistant', content: text });
      return { kind: 'ok', text, value: parsed.value };
    }
    last = { text, errors };
    if (attempt + 1 < STRUCTURED_ATTEMPTS) {
      yield {
        type: 'warning',
        code: 'output_schema_mismatch',
        message: `the answer does not match --output-schema (${errors.slice(0, 3).join('; ')}); asking again`,
      };
      note = fillPrompt(loadPrompt('agent/output-schema-retry.md'), { errors: errors.map((e) => `- ${e}`).join('\n') });
    }
  }
  return { kind: 'mismatch', ...last };
}

/** The reply as JSON: the whole text (a Markdown fence around it is tolerated). */
export function parseAnswer(text: string, calls: number): { ok: true; value: unknown } | { ok: false; error: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: false, error: calls > 0 ? 'the model called a tool instead of answering with JSON' : 'the answer is empty' };
  const fenced = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/.exec(trimmed);
  try {
    return { ok: true, value: JSON.parse(fenced?.[1] ?? trimmed) as unknown };
  } catch (err) {
    return { ok: false, error: `the answer is not valid JSON (${err instanceof Error ? err.message : String(err)})` };
  }
}
