/**
 * The server's request and response shapes, as zod schemas: the routes validate bodies with them
 * (a bad body is a 400 naming the field) and GET /openapi.json is generated from them, beside the
 * event schemas of src/agent/events.ts (the WebSocket frames). Field names are snake_case, as
 * in the events.
 */
import { z } from 'zod';
import { DECISION_WORDS } from '../loop/decisions.js';
import { LoopRequestSchema } from '../loop/loop-request.js';

export const errorBody = z.strictObject({
  error: z.strictObject({
    code: z.string().describe('stable, machine-readable: not_found, busy, invalid_body, unauthorized, …'),
    message: z.string(),
  }),
});

export const health = z.strictObject({
  ok: z.literal(true),
  version: z.string(),
  backend: z.enum(['pglite', 'postgres']),
  uptime_ms: z.number().int(),
});

export const createSessionBody = z.strictObject({
  profile: z.string().min(1).optional().describe('profile id (GET /agents); default: the server\'s'),
  model: z.string().min(1).optional().describe('Ollama model; default: the server\'s'),
});

export const sessionStatus = z.enum(['idle', 'running']).describe('running while a turn runs');

export const sessionSummary = z.strictObject({
  id: z.string(),
  profile: z.string(),
  model: z.string(),
  title: z.string().describe('first line of the first message ("" before one)'),
  status: sessionStatus,
  stored: z.boolean().describe('false until the first turn\'s model answered (as with navi run)'),
  created_at: z.string(),
  updated_at: z.string(),
  usage: z.strictObject({ prompt_tokens: z.number().int(), completion_tokens: z.number().int() }),
});

export const displayMessage = z.strictObject({
  seq: z.number().int(),
  role: z.string(),
  content: z.string(),
  thinking: z.string().optional(),
  tool_calls: z.array(z.unknown()).optional(),
  tool_name: z.string().optional(),
  is_plan: z.boolean(),
  created_at: z.string(),
});

export const sessionDetail = sessionSummary.extend({
  messages: z.array(displayMessage).describe('the display buffer (never the compressed context)'),
  next_seq: z.number().int().describe('seq the next event on /ws/sessions/{id} gets'),
});

export const sessionList = z.strictObject({ sessions: z.array(sessionSummary) });

export const postMessageBody = z.strictObject({
  content: z.string().trim().min(1, 'content must be non-empty text'),
});

export const accepted = z.strictObject({
  accepted: z.literal(true),
  session_id: z.string(),
  first_seq: z.number().int().describe('seq of the turn\'s first event on the WebSocket'),
});

export const stopped = z.strictObject({ stopping: z.boolean().describe('false: nothing was running') });

export const agentInfo = z.strictObject({
  id: z.string(),
  description: z.string(),
  tools: z.array(z.string()),
  problem: z.string().optional().describe('why the profile cannot be used'),
});

export const agentList = z.strictObject({ agents: z.array(agentInfo) });

export const pendingDecision = z.strictObject({
  prompt: z.enum(['approval', 'completion', 'stagnation', 'max_iterations']),
  iteration: z.number().int(),
  question: z.string(),
  options: z.array(z.string()),
  words: z.array(z.enum(DECISION_WORDS)).describe('the `decision` values that answer it'),
  block: z.string().optional(),
});

export const runSummary = z.strictObject({
  id: z.string(),
  session_id: z.string(),
  task_name: z.string(),
  task: z.string().describe('the task prompt'),
  status: z.string().describe('running, completed, incomplete, aborted, budget_exhausted, interrupted, failed'),
  reason: z.string().nullable(),
  alive: z.boolean().nullable().describe('for a running run: whether its process still runs it (heartbeat); null otherwise'),
  owner: z.string().describe('who runs it: "this server" or "pid N on HOST"'),
  iteration: z.number().int(),
  max_iterations: z.number().int(),
  usage: z.strictObject({ prompt_tokens: z.number().int(), completion_tokens: z.number().int() }),
  max_tokens: z.number().int().nullable(),
  deadline_at: z.string().nullable(),
  started_at: z.string(),
  updated_at: z.string(),
  finished_at: z.string().nullable(),
  pending_decision: pendingDecision.nullable().describe('a prompt waiting for POST /runs/{id}/decisions (runs this server started)'),
});

export const iterationView = z.strictObject({
  iteration: z.number().int(),
  phase: z.string(),
  indicators: z.unknown(),
  state_hash: z.string(),
  gate_decision: z.string().nullable(),
  gate_reason: z.string().nullable(),
  exit_signal: z.unknown(),
  status_block: z.string().describe('the NAVIGATOR_STATUS block'),
  status: z.record(z.string(), z.string()).describe('the NAVIGATOR_STATUS fields, read from the block'),
  decision: z.unknown(),
  usage: z.strictObject({ prompt_tokens: z.number().int(), completion_tokens: z.number().int() }),
  duration_ms: z.number().int(),
  started_at: z.string(),
  finished_at: z.string(),
});

export const runDetail = runSummary.extend({
  iterations: z.array(iterationView),
  config: z.unknown().describe('the effective loop configuration stored with the run'),
  cwd: z.string(),
  next_seq: z.number().int().nullable().describe('seq the next event on /ws/runs/{id} gets (runs this server started)'),
});

export const runList = z.strictObject({ runs: z.array(runSummary) });

/**
 * POST /runs: the loop request (src/loop/loop-request.ts) less what stays the server operator's —
 * the sandbox (`navi serve --sandbox`), notify targets (`--notify`) and decisions files (the
 * server answers prompts through POST /runs/{id}/decisions).
 */
export const startRunBody = LoopRequestSchema.pick({
  task: true,
  profile: true,
  model: true,
  max_iterations: true,
  approval: true,
  never_pause: true,
  strategy: true,
  max_tokens: true,
  deadline: true,
  iteration_timeout: true,
});

export const runStarted = z.strictObject({ id: z.string(), session_id: z.string(), status: z.string() });

/** A `--decisions` line. */
export const decisionBody = z.strictObject({
  decision: z.enum(DECISION_WORDS),
  feedback: z.string().optional(),
});

export const decisionTaken = z.strictObject({ accepted: z.literal(true) });

export const wsTicket = z.strictObject({
  ticket: z.string().describe('send as the WebSocket subprotocol "navi.ticket.<ticket>" (single use)'),
  expires_in_ms: z.number().int(),
});

/** What a client may send on a WebSocket. */
export const clientFrame = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('message'), content: z.string().trim().min(1, 'content must be non-empty text') }),
  z.strictObject({ type: z.literal('stop') }),
  z.strictObject({ type: z.literal('decision'), decision: z.enum(DECISION_WORDS), feedback: z.string().optional() }),
]);
export type ClientFrame = z.infer<typeof clientFrame>;

/** The first issue of a failed parse, naming the field: `content: …`. */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'invalid body';
  if (issue.code === 'unrecognized_keys') return `unknown field ${issue.keys.join(', ')}`;
  const field = issue.path.length > 0 ? issue.path.join('.') : 'body';
  return `${field}: ${issue.message}`;
}
