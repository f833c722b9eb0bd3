/**
 * The event contract (SPEC §4). These zod schemas are the single source: the agent's TypeScript
 * types are inferred from them, `docs/events.schema.json` is generated from them
 * (`npm run gen:schema`), and the scenario tests validate every emitted line against them.
 * Payload field names are snake_case because scripts read them.
 */
import { z } from 'zod';
import { SANDBOX_MODES } from '../sandbox/modes.js';
import { SCHEMA_VERSION } from './schema-version.js';

export { SCHEMA_VERSION };

const todoItem = z.strictObject({
  id: z.number().int().describe('1-based position in the list'),
  text: z.string(),
  status: z.enum(['pending', 'in_progress', 'done']),
  validation: z.string().optional().describe('how the step was verified'),
});

/** `--sandbox` / config `sandbox`, as run_started and loop_started show it. */
const sandboxFields = {
  sandbox: z.enum(SANDBOX_MODES).describe("where the shell tool's commands run: off, workspace-write (write the tree and $TMPDIR only) or read-only"),
  sandbox_network: z.boolean().describe('sandboxed commands may reach the network (sandbox.network); false when the sandbox is off'),
};

const usage = z.strictObject({
  prompt_tokens: z.number().int().nonnegative().describe('sum of real prompt_eval_count over model calls'),
  completion_tokens: z.number().int().nonnegative().describe('sum of real eval_count over model calls'),
});

/** Why an agent turn ended. */
export const stopReason = z
  .enum(['completed', 'max_iterations', 'context_too_large', 'interrupted', 'truncated', 'model_error'])
  .describe(
    'completed; max_iterations; context_too_large; interrupted; truncated (the answer hit the output limit, done_reason "length"); ' +
      'model_error (the model kept writing unparsable tool calls or empty replies after retries)',
  );
export type StopReason = z.infer<typeof stopReason>;

/** One completion indicator: met, not met, or not applicable to this run. */
const indicatorValue = z.union([z.boolean(), z.literal('skipped')]);

const indicators = z
  .strictObject({
    code_committed: indicatorValue,
    tests_passing: indicatorValue,
    code_simplified: indicatorValue,
    docs_updated: indicatorValue,
    ticket_closed: indicatorValue,
    marker_created: indicatorValue,
  })
  .describe('the six completion indicators, derived from evidence');

/** Which menu a loop decision answers. */
const promptKind = z
  .enum(['approval', 'completion', 'stagnation', 'max_iterations'])
  .describe('approval (Continue/Adjust/Abort), completion (approval once the exit gate passed: Finish/Adjust/Abort), stagnation (Continue/Clarify/Abort) or max_iterations (Extend/Complete/Abort)');

/** The words of `--decisions` lines; Clarify (stagnation) is `adjust`. */
const decisionWord = z.enum(['continue', 'adjust', 'abort', 'extend', 'complete']);

/** How a loop ended (also the `loop_runs.status` stored). */
const loopStatus = z.enum(['completed', 'incomplete', 'aborted', 'budget_exhausted', 'interrupted', 'failed']);

/** Loop mode (SPEC §7): events of `navi loop` (and `navi run` when it enters loop mode). */
const loopEventPayloads = {
  loop_started: z.strictObject({
    task_name: z.string().describe('task name (file name, `name:` or a slug of the prompt)'),
    task: z.string().describe('the task prompt'),
    source: z.string().describe('task file as given, or "command line"'),
    resumed: z.boolean().describe('true for `--resume`'),
    start_iteration: z.number().int().describe('the iteration about to run (1 for a fresh run)'),
    max_iterations: z.number().int(),
    stagnation_threshold: z.number().int(),
    exit_requires_explicit_signal: z.boolean(),
    iteration_approval: z.enum(['none', 'strict', 'periodic']),
    periodic_interval: z.number().int(),
    never_pause_on_stagnation: z.boolean(),
    stagnation_diversify_strategy: z.enum(['combine', 'radical', 'reread']),
    decisions: z.enum(['terminal', 'decisions_file', 'headless']).describe('where approval/stagnation/max-iterations answers come from'),
    checks: z.array(z.string()).describe('names of the task\'s checks, run after every iteration'),
    max_tokens: z.number().int().nullable().describe('token budget of the whole run (prompt + completion)'),
    deadline_at: z.string().nullable().describe('ISO time the run must end by'),
    iteration_timeout_s: z.number().describe('seconds one iteration\'s agent turn may take'),
    git_repo: z.boolean().describe('false: commit evidence is unknown (code_committed skipped)'),
    ...sandboxFields,
  }),
  iteration_started: z.strictObject({
    max_iterations: z.number().int(),
    tokens_spent: z.number().int().describe('prompt + completion tokens of the run so far'),
  }),
  iteration_status: z.strictObject({
    phase: z.enum(['INIT', 'RESEARCH', 'IMPL', 'VERIFY', 'COMPLETE']),
    phase_reason: z.string().describe('which phase rule decided'),
    max_iterations: z.number().int(),
    progress: z.number().int().describe('percent: phase weight + met/total × 25'),
    indicators,
    skipped: z.record(z.string(), z.string()).describe('why each skipped indicator is skipped'),
    heuristics_met: z.number().int(),
    heuristics_total: z.number().int(),
    exit_signal: z.boolean().describe('an accepted exit signal this iteration'),
    state_hash: z.string().describe('navigator-compatible 6-hex MD5 state hash'),
    previous_hash: z.string().nullable(),
    stagnation_count: z.number().int(),
    stagnation_threshold: z.number().int(),
    next_action: z.string(),
    evidence: z
      .strictObject({
        git_repo: z.boolean(),
        files_read: z.array(z.string()),
        files_changed: z.array(z.string()),
        commits_since_start: z.number().int(),
        uncommitted_tracked_changes: z.boolean(),
        tool_calls: z.number().int(),
        test_runs: z.array(z.strictObject({ command: z.string(), exit_code: z.number().int().nullable() })),
        checks: z.array(
          z.strictObject({
            name: z.string(),
            exit_code: z.number().int().nullable(),
            duration_ms: z.number().int(),
            timed_out: z.boolean(),
          }),
        ),
        ticket_exit_code: z.number().int().nullable().optional(),
      })
      .describe('what the runner observed (summary; the full record is in `navi runs show`)'),
    block: z.string().describe('the NAVIGATOR_STATUS block as printed'),
  }),
  exit_gate: z.strictObject({
    decision: z.enum(['exit', 'continue', 'blocked']),
    reason: z.string().describe('e.g. "BLOCKED: Exit signal but only 1/5 heuristics"'),
    heuristics_met: z.number().int(),
    heuristics_total: z.number().int(),
    heuristics_needed: z.number().int().describe('met indicators the gate needs: 2 when five or six apply, else 1'),
    exit_signal: z.boolean(),
    signal: z
      .strictObject({
        source: z.enum(['tool', 'v2', 'v3']),
        reason: z.string(),
        accepted: z.boolean(),
        rejected: z.string().optional().describe('why it was not taken as an exit'),
      })
      .nullable()
      .describe('the exit signal the model gave this iteration, if any'),
    feedback: z.string().optional().describe('what the next iteration tells the model'),
  }),
  approval_requested: z.strictObject({
    prompt: promptKind,
    question: z.string(),
    options: z.array(z.string()),
    block: z.string().optional().describe('the STAGNATION DETECTED / MAX ITERATIONS REACHED block'),
  }),
  approval_decision: z.strictObject({
    prompt: promptKind,
    decision: decisionWord,
    choice: z.string().describe('the option taken as shown: Continue, Finish, Adjust, Clarify, Abort, Extend, Complete'),
    source: z.enum(['terminal', 'decisions_file', 'headless']),
    feedback: z.string().optional(),
    line: z.number().int().optional().describe('line of the --decisions input'),
  }),
  stagnation_detected: z.strictObject({
    reason: z.enum(['same_state', 'oscillation']),
    count: z.number().int(),
    period: z.number().int().optional().describe('oscillation cycle length (2 or 3)'),
    threshold: z.number().int(),
    state_hash: z.string(),
    hash_history: z.array(z.string()).describe('recorded hashes since the last reset, current last'),
    action: z.enum(['prompt', 'diversify', 'abort']),
    block: z.string().describe('the STAGNATION DETECTED block'),
  }),
  diversified: z.strictObject({
    strategy: z.enum(['combine', 'radical', 'reread']),
    attempt: z.number().int().describe('1-based; the run aborts instead of a third'),
    max_attempts: z.number().int(),
    instruction: z.string().describe('what the next iteration tells the model'),
    block: z.string(),
  }),
  loop_complete: z.strictObject({
    status: loopStatus.describe('how the loop ended; resumable unless completed or aborted'),
    reason: z.string(),
    iterations: z.number().int().describe('last committed iteration'),
    max_iterations: z.number().int(),
    phase: z.string().nullable(),
    state_hash: z.string().nullable(),
    indicators: indicators.nullable().describe('the last iteration\'s indicators, with marker_created true once the ending wrote its marker (as the block shows)'),
    marker: z.string().nullable().describe('context marker written, relative to the working directory'),
    resumable: z.boolean(),
    resume_command: z.string().optional(),
    block: z.string().optional().describe('the LOOP COMPLETE block (completed runs)'),
    exit_line: z.string().optional().describe('{"v":2,"type":"exit",…} (completed runs)'),
  }),
} as const;

/** Payload of each event type, without the envelope fields. */
export const eventPayloads = {
  run_started: z.strictObject({
    profile: z.string().describe('profile id the turn runs with'),
    model: z.string().describe('Ollama model name'),
    cwd: z.string().describe('working directory; file tools are confined to it'),
    resumed: z.boolean().describe('true when continuing an existing session (--session)'),
    ...sandboxFields,
  }),
  model_info: z.strictObject({
    model: z.string(),
    num_ctx: z.number().int().describe('context window requested from Ollama'),
    context_length: z.number().int().optional().describe("the model's trained context length, from /api/show"),
    capabilities: z.array(z.string()).optional().describe('what Ollama reports the model can do (/api/show): completion, tools, thinking, …'),
    think: z
      .union([z.boolean(), z.enum(['low', 'medium', 'high'])])
      .optional()
      .describe('what requests send as think: false, true or an effort level (configured, and the model supports thinking)'),
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
  warning: z.strictObject({
    code: z
      .string()
      .describe(
        'stable; among them sandbox_refused (the sandbox stopped a write outside the tree or a connection), context_overflow (Ollama refused a prompt larger than the context it loaded: compressed and asked again), ' +
          'context_truncated_by_server (the prompt count fell while the conversation only grew: the server dropped messages) ' +
          'and notify_failed (a loop notification was given up on; the target is named by scheme and host only)',
      ),
    message: z.string(),
  }),
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
  ...loopEventPayloads,
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
    indicators: z
      .record(z.string(), indicatorValue)
      .optional()
      .describe('loop mode: the last iteration\'s six indicators (true, false or "skipped"), with marker_created true once the ending wrote its marker (as the LOOP COMPLETE block shows)'),
    state_hash: z.string().optional().describe('loop mode: the last iteration\'s state hash'),
    errors: z.array(z.string()).describe('one-line error messages'),
    structured: z
      .unknown()
      .optional()
      .describe('with --output-schema: the final answer parsed as JSON, matching the schema (absent when it did not)'),
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
  iteration: z.number().int().optional().describe('tool-loop iteration (1-based) or, on loop events, the loop iteration'),
  loop_iteration: z.number().int().optional().describe('loop mode: the loop iteration this event belongs to'),
  is_subagent: z.boolean().optional().describe('true for events forwarded from a sub-agent'),
  agent_path: z.array(z.string()).optional().describe('profile ids from the root agent down to the emitter'),
});
export type Envelope = z.infer<typeof envelope>;

/** An event as the agent core yields it: a payload plus optional context. */
export type AgentEvent = {
  [K in Exclude<EventType, 'result'>]: { type: K; iteration?: number; loop_iteration?: number; is_subagent?: boolean; agent_path?: string[] } & EventPayload<K>;
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
