/**
 * The routes of `navi serve` as data — method, path, the zod schemas of body and answer — from
 * which GET /openapi.json is generated, and whose body schemas the handlers validate with (one
 * definition each). The WebSocket frames are the events of src/agent/events.ts (`eventJsonSchema`).
 */
import { z } from 'zod';
import { eventJsonSchema } from '../agent/events.js';
import * as s from './api-schemas.js';

export interface RouteSpec {
  method: 'get' | 'post' | 'delete';
  /** OpenAPI form: `/sessions/{id}`. */
  path: string;
  summary: string;
  body?: z.ZodType;
  /** The success answer and its status. */
  ok: { status: 200 | 201 | 202; schema: z.ZodType };
  /** Other statuses it may answer (each with the error body). */
  errors: readonly number[];
}

export const ROUTES = {
  health: { method: 'get', path: '/health', summary: 'Liveness, version and store backend', ok: { status: 200, schema: s.health }, errors: [] },
  listSessions: { method: 'get', path: '/sessions', summary: 'Chat sessions, most recently active first', ok: { status: 200, schema: s.sessionList }, errors: [] },
  createSession: { method: 'post', path: '/sessions', summary: 'A new session (stored once its first turn\'s model answered)', body: s.createSessionBody, ok: { status: 201, schema: s.sessionSummary }, errors: [400] },
  getSession: { method: 'get', path: '/sessions/{id}', summary: 'A session: its display buffer `messages` and status', ok: { status: 200, schema: s.sessionDetail }, errors: [404] },
  deleteSession: { method: 'delete', path: '/sessions/{id}', summary: 'Deletes a session and everything stored with it', ok: { status: 200, schema: z.strictObject({ deleted: z.literal(true) }) }, errors: [404, 409] },
  postMessage: { method: 'post', path: '/sessions/{id}/messages', summary: 'Starts a turn; its events stream on /ws/sessions/{id}', body: s.postMessageBody, ok: { status: 202, schema: s.accepted }, errors: [400, 404, 409] },
  stopSession: { method: 'post', path: '/sessions/{id}/stop', summary: 'Stops the running turn at a safe point (what was said is saved)', ok: { status: 200, schema: s.stopped }, errors: [404] },
  listAgents: { method: 'get', path: '/agents', summary: 'Profiles with their descriptions and tools', ok: { status: 200, schema: s.agentList }, errors: [] },
  listRuns: { method: 'get', path: '/runs', summary: 'Loop runs, newest first, from every navi on this store', ok: { status: 200, schema: s.runList }, errors: [] },
  getRun: { method: 'get', path: '/runs/{id}', summary: 'A loop run with its committed iterations and their NAVIGATOR_STATUS fields', ok: { status: 200, schema: s.runDetail }, errors: [404] },
  startRun: { method: 'post', path: '/runs', summary: 'Starts a loop run (navi loop\'s options); its events stream on /ws/runs/{id}', body: s.startRunBody, ok: { status: 201, schema: s.runStarted }, errors: [400] },
  decideRun: { method: 'post', path: '/runs/{id}/decisions', summary: 'Answers the run\'s waiting prompt (a --decisions line)', body: s.decisionBody, ok: { status: 200, schema: s.decisionTaken }, errors: [400, 404, 409] },
  stopRun: { method: 'post', path: '/runs/{id}/stop', summary: 'Stops a loop run at a safe point; it is saved and resumable', ok: { status: 200, schema: s.stopped }, errors: [404, 409] },
  wsTicket: { method: 'post', path: '/ws-tickets', summary: 'A single-use ticket for a browser WebSocket (subprotocol navi.ticket.<ticket>)', ok: { status: 201, schema: s.wsTicket }, errors: [] },
  openapi: { method: 'get', path: '/openapi.json', summary: 'This document', ok: { status: 200, schema: z.record(z.string(), z.unknown()) }, errors: [] },
} as const satisfies Record<string, RouteSpec>;

const STATUS_TEXT: Record<number, string> = {
  400: 'bad request (the message names the field)',
  401: 'missing or wrong bearer token',
  403: 'Host or Origin is not this server\'s own',
  404: 'unknown id',
  409: 'conflict (busy, or not this server\'s run)',
  413: 'request body above the limit (1 MB)',
  415: 'request body that is not Content-Type: application/json',
  503: 'the server is stopping',
};
/** What every route may answer, before the route itself runs (routes.ts's guards). */
const GUARD_STATUSES = [401, 403];
const BODY_STATUSES = [413, 415];

function jsonSchema(schema: z.ZodType): unknown {
  return z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' });
}

/** The OpenAPI 3.1 document of the server. */
export function openApiDocument(version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [id, r] of Object.entries(ROUTES) as Array<[string, RouteSpec]>) {
    const responses: Record<string, unknown> = { [String(r.ok.status)]: { description: 'ok', content: { 'application/json': { schema: jsonSchema(r.ok.schema) } } } };
    for (const status of [...r.errors, ...GUARD_STATUSES, ...(r.body !== undefined ? BODY_STATUSES : [])]) {
      responses[String(status)] = { description: STATUS_TEXT[status] ?? 'error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    }
    const params = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    (paths[r.path] ??= {})[r.method] = {
      operationId: id,
      summary: r.summary,
      ...(params.length > 0 ? { parameters: params } : {}),
      ...(r.body !== undefined ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(r.body) } } } } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'navi serve',
      version,
      description:
        'REST and WebSocket API of navi. WebSockets /ws/sessions/{id} and /ws/runs/{id} carry the schema-v1 events (components.schemas.Event) ' +
        'in order; clients send {"type":"message","content"}, {"type":"stop"} or {"type":"decision","decision","feedback"?}. See docs/serve-api.md.',
    },
    security: [{ bearer: [] }],
    paths,
    components: {
      schemas: { Error: jsonSchema(s.errorBody), Event: eventJsonSchema(), ClientFrame: jsonSchema(s.clientFrame) },
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    },
  };
}
