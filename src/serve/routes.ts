/**
 * The REST routes of `navi serve` (hono): bodies validated with the schemas of openapi.ts's
 * route table, every error one `{error: {code, message}}` object, and the page's files at `/`.
 * Before any route, in this order: Host and Origin (403, request-guard.ts) on every request, the
 * token (401) on every API route, then the body: JSON only (415), at most `maxBodyBytes` (413) —
 * a declared length above it is refused before a byte is read, a streamed body is counted while
 * it is read and cut at the limit (hono's bodyLimit; @hono/node-server then discards at most
 * 64 MB or 500 ms of the rest and closes the connection).
 */
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { z } from 'zod';
import { ApiError, errorJson, toApiError } from './api-error.js';
import { firstIssue } from './api-schemas.js';
import type { Gate } from './auth.js';
import { openApiDocument, ROUTES } from './openapi.js';
import { checkBodyHeaders, checkHost, checkOrigin, tooLarge, type HostPolicy, type Refusal } from './request-guard.js';
import type { RunsHost } from './runs-host.js';
import type { SessionsHost } from './sessions-host.js';
import { readPageFile } from './static-page.js';
import type { ServeDeps } from './types.js';

export interface RouteContext {
  deps: ServeDeps;
  sessions: SessionsHost;
  runs: RunsHost;
  gate: Gate;
  /** Which Host names are this server's (request-guard.ts). */
  hosts: HostPolicy;
  /** The largest request body, in bytes. */
  maxBodyBytes: number;
  version: string;
  started: number;
}

/** The request's JSON body, validated; a 400 naming the field otherwise. */
async function body<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  let raw: unknown;
  try {
    const text = await c.req.text();
    raw = text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    throw new ApiError(400, 'invalid_body', 'body: not valid JSON');
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ApiError(400, 'invalid_body', 'body: must be a JSON object');
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new ApiError(400, 'invalid_body', firstIssue(parsed.error));
  return parsed.data;
}

/** Paths the token does not guard: the page's static files (they hold no data). */
function isApiPath(path: string): boolean {
  return /^\/(health|sessions|agents|runs|ws-tickets|openapi\.json|ws)(\/|$)/.test(path);
}

/**
 * The live page may load and connect to this server only, and runs no inline script: even text
 * that slipped into the DOM as markup could not run or send anything elsewhere.
 */
const PAGE_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export function createApp(ctx: RouteContext): Hono {
  const { sessions, runs, gate, deps } = ctx;
  const app = new Hono();

  app.onError((err, c) => {
    const api = toApiError(err);
    if (api.status === 500) deps.log(`${c.req.method} ${c.req.path}: ${api.message}`);
    return c.json(errorJson(api), api.status);
  });
  app.notFound((c) => c.json(errorJson(new ApiError(404, 'not_found', `no route ${c.req.method} ${c.req.path}`)), 404));

  const refuse = (r: Refusal): Response =>
    new Response(JSON.stringify(errorJson(new ApiError(r.status, r.code, r.message))), { status: r.status, headers: { 'content-type': 'application/json' } });
  app.use('*', async (c, next) => {
    const host = c.req.header('host');
    const refused = checkHost(host, ctx.hosts) ?? checkOrigin(c.req.header('origin'), host);
    if (refused !== null) return refuse(refused);
    if (isApiPath(c.req.path) && !gate.allowsRequest(c.req.header('authorization'))) {
      c.header('WWW-Authenticate', 'Bearer');
      return c.json(errorJson(new ApiError(401, 'unauthorized', 'this server needs Authorization: Bearer <token> (the token navi serve printed, or the one in its token file)')), 401);
    }
    const body = checkBodyHeaders(
      { contentType: c.req.header('content-type'), contentLength: c.req.header('content-length'), transferEncoding: c.req.header('transfer-encoding') },
      ctx.maxBodyBytes,
    );
    if (body !== null) return refuse(body);
    await next();
    return undefined;
  });
  app.use('*', bodyLimit({ maxSize: ctx.maxBodyBytes, onError: () => refuse(tooLarge(ctx.maxBodyBytes)) }));

  app.get('/health', (c) => c.json({ ok: true, version: ctx.version, backend: deps.store.backend, uptime_ms: Date.now() - ctx.started }));
  app.get('/openapi.json', (c) => c.json(openApiDocument(ctx.version)));

  app.get('/sessions', async (c) => c.json({ sessions: await sessions.list() }));
  app.post('/sessions', async (c) => c.json(sessions.create(await body(c, ROUTES.createSession.body)), 201));
  app.get('/sessions/:id', async (c) => c.json(await sessions.get(c.req.param('id'))));
  app.delete('/sessions/:id', async (c) => {
    await sessions.remove(c.req.param('id'));
    return c.json({ deleted: true });
  });
  app.post('/sessions/:id/messages', async (c) => {
    const id = c.req.param('id');
    const { content } = await body(c, ROUTES.postMessage.body);
    const firstSeq = await sessions.startTurn(id, content);
    return c.json({ accepted: true, session_id: id, first_seq: firstSeq }, 202);
  });
  app.post('/sessions/:id/stop', async (c) => {
    const id = c.req.param('id');
    await sessions.streamOf(id);
    return c.json({ stopping: sessions.stop(id) });
  });

  app.get('/agents', (c) => c.json({ agents: deps.agents() }));

  app.get('/runs', async (c) => c.json({ runs: await runs.list() }));
  app.post('/runs', async (c) => c.json(await runs.start(await body(c, ROUTES.startRun.body)), 201));
  app.get('/runs/:id', async (c) => c.json(await runs.get(c.req.param('id'))));
  app.post('/runs/:id/decisions', async (c) => {
    const id = c.req.param('id');
    const d = await body(c, ROUTES.decideRun.body);
    await runs.decide(id, d.decision, d.feedback);
    return c.json({ accepted: true });
  });
  app.post('/runs/:id/stop', async (c) => c.json({ stopping: await runs.stop(c.req.param('id')) }));

  app.post('/ws-tickets', (c) => c.json(gate.tickets.issue(), 201));

  app.get('*', async (c) => {
    const file = await readPageFile(c.req.path);
    if (file === null) throw new ApiError(404, 'not_found', c.req.path === '/' ? 'the live page is not installed with this navi' : `no file ${c.req.path}`);
    return c.body(new Uint8Array(file.body), 200, { 'content-type': file.type, 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff', 'content-security-policy': PAGE_CSP });
  });

  return app;
}
