/**
 * The event contract (SPEC §4). These zod schemas are the single source: the agent's TypeScript
 * types are inferred from them, `docs/events.schema.json` is generated from them
 * (`npm run gen:schema`), and the scenario tests validate every emitted line against them.
 * Payload field names are snake_case because scripts read them.
 */
import { z } from 'zod';

/** Bumped only on a breaking change to an existing event's fields. */
export const SCHEMA_VERSION = 1;

const todoItem = z.strictObject({
  id: z.number().int().describe('1-based position in the list'),
  text: z.string(),
  status: z.enum(['pending', 'in_progress', 'done']),
  validation: z.string().optional().describe('how the step was verified'),
});

const usage = z.strictObject({
  prompt_tokens: z.number().int().nonnegative().describe('sum of real prompt_eval_count over model calls'),
  completion_tokens: z.number().int().nonnegative().describe('sum of real eval_count over model calls'),
});

/** Why an agent turn ended. */
export const stopReason = z.enum(['completed', 'max_iterations', 'context_too_large', 'interrupted']);
export type StopReason = z.infer<typeof stopReason>;

/** Payload of each event type, without the envelope fields. */
export const eventPayloads = {
  run_started: z.strictObject({
    profile: z.string().describe('profile id the turn runs with'),
    model: z.string().describe('Ollama model name'),
    cwd: z.string().describe('working directory; file tools are confined to it'),
    resumed: z.boolean().describe('true when continuing an existing session (--session)'),
  }),
  model_info: z.strictObject({
    model: z.string(),
    num_ctx: z.number().int().describe('context window requested from Ollama'),
    context_length: z.number().int().optional().describe("the model's trained context length, from /api/show"),
  }),
  planning_status: z.strictObject({
    phase: z.string().describe('planning phase: analysis | execution_plan | done'),
    message: z.string(),
  }),
  plan_ready: z.strictObject({
    complexity: z.string(),
    plan: z.string().describe('the plan text injected into the context'),
    steps: z.array(z.string()),
  }),
  thinking_delta: z.strictObject({ text: z.string().describe('a piece of the model\'s reasoning') }),
  thinking_end: z.strictObject({ chars: z.number().int().describe('length of the reasoning block') }),
  text_delta: z.strictObject({ text: z.string().describe('a piece of the assistant\'s answer') }),
  tool_started: z.strictObject({
    call_id: z.string(),
    name: z.string(),
    arguments: z.unknown().describe('arguments as the model sent them'),
  }),
  tool_call: z.strictObject({
    call_id: z.string(),
    name: z.string(),
    arguments: z.unknown(),
    ok: z.boolean().describe('false for a bad call, a refusal, a non-zero exit or a thrown error'),
    duration_ms: z.number().nonnegative(),
    output: z.string().describe('the result the model reads, capped for display'),
    truncated: z.boolean().describe('true when output was shortened for this event'),
  }),
  todo_updated: z.strictObject({ todos: z.array(todoItem) }),
  compression_started: z.strictObject({
    reason: z.string().describe('preturn | midturn | postturn | manual'),
    estimated_tokens: z.number().int(),
  }),
  context_compressed: z.strictObject({
    messages_before: z.number().int(),
    messages_after: z.number().int(),
    estimated_tokens_after: z.number().int(),
  }),
  warning: z.strictObject({ code: z.string(), message: z.string() }),
  error: z.strictObject({ code: z.string(), message: z.string() }),
  heartbeat: z.strictObject({
    waiting_for: z.enum(['model', 'tool']).describe('what navi is waiting on'),
    elapsed_ms: z.number().int().describe('time since the wait began'),
  }),
  stream_end: z.strictObject({
    stop_reason: stopReason,
    text: z.string().describe('final assistant text of the turn'),
    iterations: z.number().int().describe('tool-loop iterations used'),
    usage,
  }),
  result: z.strictObject({
    status: z.enum([
      'success',
      'error',
      'invalid_input',
      'incomplete',
      'aborted',
      'budget_exhausted',
      'llm_unavailable',
      'interrupted',
    ]),
    reason: z.string().describe('machine-readable reason, e.g. completed, max_iterations, model_not_found'),
    exit_code: z.number().int(),
    result: z.string().describe('final assistant text ("" when none)'),
    run_id: z.string().optional(),
    iterations: z.number().int().optional(),
    num_turns: z.number().int().describe('model calls made'),
    usage,
    duration_ms: z.number().int(),
    indicators: z.record(z.string(), z.boolean()).optional(),
    state_hash: z.string().optional(),
    errors: z.array(z.string()).describe('one-line error messages'),
  }),
} as const;

export type EventType = keyof typeof eventPayloads;
export type EventPayload<K extends EventType> = z.infer<(typeof eventPayloads)[K]>;

/** Fields every event carries (SPEC §4). */
export const envelope = z.strictObject({
  type: z.string(),
  schema_version: z.literal(SCHEMA_VERSION),
  seq: z.number().int().nonnegative().describe('0-based position in this output stream'),
  ts: z.string().describe('ISO-8601 time the event was emitted'),
  session_id: z.string().describe('"" only when the run failed before a session existed'),
  run_id: z.string().optional().describe('loop run id (loop mode)'),
  iteration: z.number().int().optional().describe('tool-loop iteration (1-based) or loop iteration'),
  is_subagent: z.boolean().optional().describe('true for events forwarded from a sub-agent'),
  agent_path: z.array(z.string()).optional().describe('profile ids from the root agent down to the emitter'),
});
export type Envelope = z.infer<typeof envelope>;

/** An event as the agent core yields it: a payload plus optional context. */
export type AgentEvent = {
  [K in Exclude<EventType, 'result'>]: { type: K; iteration?: number; is_subagent?: boolean; agent_path?: string[] } & EventPayload<K>;
}[Exclude<EventType, 'result'>];

/** An event as written to stdout. */
export type WireEvent = Envelope & Record<string, unknown>;

/** Validates one emitted event (envelope + payload); returns problems, empty when valid. */
export function validateEvent(value: unknown): string[] {
  if (typeof value !== 'object' || value === null) return ['event is not an object'];
  const type = (value as { type?: unknown }).type;
  if (typeof type !== 'string' || !(type in eventPayloads)) return [`unknown event type ${JSON.stringify(type)}`];
  const payloadSchema = eventPayloads[type as EventType];
  const full = envelope.extend(payloadSchema.shape);
  const parsed = full.safeParse(value);
  if (parsed.success) return [];
  return parsed.error.issues.map((i) => `${type}.${i.path.join('.')}: ${i.message}`);
}

/** JSON Schema of every event, for docs/events.schema.json. */
export function eventJsonSchema(): Record<string, unknown> {
  const variants = Object.entries(eventPayloads).map(([type, schema]) =>
    envelope.extend({ ...schema.shape, type: z.literal(type) }),
  );
  const union = z.union(variants as unknown as [z.ZodType, z.ZodType, ...z.ZodType[]]);
  const schema = z.toJSONSchema(union, { unrepresentable: 'any' }) as Record<string, unknown>;
  return { title: 'navi event (stream-json line, or the json output\'s single result object)', ...schema };
}
