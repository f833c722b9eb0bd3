/**
 * The WebSockets of `navi serve` (the `ws` library does the protocol): `/ws/sessions/{id}` and
 * `/ws/runs/{id}`, optionally `?since=SEQ` (the last seq the client has). The upgrade is refused
 * with a plain HTTP answer before any WebSocket exists: 403 when Host or Origin is not this
 * server's own (request-guard.ts: a rebinding page, or a page on another origin — browsers let any
 * page open a WebSocket anywhere), 401 without the token (header or ticket, auth.ts), 404 for an
 * unknown id. Then the subscriber gets what it missed of the current turn,
 * then live events (event-stream.ts), through its bounded queue (subscriber.ts). Client frames:
 * `{type:"message",content}` starts a turn, `{type:"stop"}` stops, `{type:"decision",…}` answers
 * a run's prompt; a refused one is answered with `{type:"serve_error",error:{code,message}}`.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { ApiError, errorJson, toApiError } from './api-error.js';
import { clientFrame, firstIssue, type ClientFrame } from './api-schemas.js';
import { WS_PROTOCOL, type Gate } from './auth.js';
import { checkHost, checkOrigin, type HostPolicy } from './request-guard.js';
import type { EventStream } from './event-stream.js';
import type { RunsHost } from './runs-host.js';
import type { SessionsHost } from './sessions-host.js';
import { DEFAULT_LIMITS, Subscriber, type SubscriberLimits } from './subscriber.js';

/** Largest frame a client may send (a message's content). */
const MAX_CLIENT_FRAME = 1024 * 1024;

export interface WsContext {
  sessions: SessionsHost;
  runs: RunsHost;
  gate: Gate;
  hosts: HostPolicy;
  limits?: SubscriberLimits;
  log: (message: string) => void;
}

/** `/ws/sessions/ID?since=3` → its parts; null for any other path. */
export function parseWsPath(url: string): { kind: 'sessions' | 'runs'; id: string; since: number } | null {
  const u = new URL(url, 'http://localhost');
  const m = /^\/ws\/(sessions|runs)\/([^/]+)$/.exec(u.pathname);
  if (m === null || m[2] === undefined) return null;
  let id: string;
  try {
    id = decodeURIComponent(m[2]);
  } catch {
    return null;
  }
  const sinceText = u.searchParams.get('since');
  const since = sinceText !== null && /^\d+$/.test(sinceText) ? Number(sinceText) : -1;
  return { kind: m[1] as 'sessions' | 'runs', id, since };
}

function refuse(socket: Duplex, err: ApiError): void {
  const body = JSON.stringify(errorJson(err));
  const reason = { 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 400: 'Bad Request' }[err.status as 401 | 403 | 404 | 400] ?? 'Error';
  socket.end(
    `HTTP/1.1 ${err.status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n` +
      `${err.status === 401 ? 'WWW-Authenticate: Bearer\r\n' : ''}\r\n${body}`,
  );
}

export class WsUpgrades {
  private readonly wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_CLIENT_FRAME,
    // A browser that offered protocols fails unless one is chosen: ours when listed.
    handleProtocols: (offered) => (offered.has(WS_PROTOCOL) ? WS_PROTOCOL : false),
  });

  constructor(private readonly ctx: WsContext) {}

  /** The http server's `upgrade` listener. */
  handle(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => undefined);
    void this.accept(req, socket, head).catch((err: unknown) => refuse(socket, toApiError(err)));
  }

  /** Closes every socket (the server stops). */
  close(): void {
    for (const ws of this.wss.clients) ws.terminate();
    this.wss.close();
  }

  private async accept(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const refused = checkHost(req.headers.host, this.ctx.hosts) ?? checkOrigin(req.headers.origin, req.headers.host);
    if (refused !== null) throw new ApiError(refused.status, refused.code, refused.message);
    const target = parseWsPath(req.url ?? '/');
    if (target === null) throw new ApiError(404, 'not_found', `no WebSocket at ${req.url ?? ''}`);
    if (!this.ctx.gate.allowsUpgrade(req.headers.authorization, req.headers['sec-websocket-protocol'])) {
      throw new ApiError(401, 'unauthorized', 'this server needs Authorization: Bearer <token>, or a ticket from POST /ws-tickets as the subprotocol navi.ticket.<ticket>');
    }
    let stream: EventStream;
    let release = (): void => undefined;
    if (target.kind === 'sessions') stream = await this.ctx.sessions.streamOf(target.id);
    else ({ stream, release } = await this.ctx.runs.streamOf(target.id));
    this.wss.handleUpgrade(req, socket, head, (ws) => this.attach(ws, target, stream, release));
  }

  private attach(ws: WebSocket, target: { kind: 'sessions' | 'runs'; id: string; since: number }, stream: EventStream, release: () => void): void {
    const sub = new Subscriber(
      {
        send: (data, done) => ws.send(data, done),
        close: (code, reason) => ws.close(code, reason),
        terminate: () => ws.terminate(),
        batch: (write) => {
          // ws writes each frame to its socket at once: corked, a flush is one write to the OS.
          const socket = (ws as unknown as { _socket?: { cork?: () => void; uncork?: () => void } })._socket;
          socket?.cork?.();
          try {
            write();
          } finally {
            socket?.uncork?.();
          }
        },
      },
      this.ctx.limits ?? DEFAULT_LIMITS,
      () => this.ctx.log(`a subscriber of ${target.kind.slice(0, -1)} ${target.id} fell behind and was cut off`),
    );
    stream.subscribe(sub, target.since);
    ws.on('close', () => {
      sub.markClosed();
      stream.unsubscribe(sub);
      release();
    });
    ws.on('error', () => undefined);
    ws.on('message', (data, isBinary) => {
      if (isBinary) return this.reply(ws, new ApiError(400, 'invalid_frame', 'frames are JSON text'));
      let frame: ClientFrame;
      try {
        const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
        const parsed = clientFrame.safeParse(JSON.parse(text));
        if (!parsed.success) return this.reply(ws, new ApiError(400, 'invalid_frame', firstIssue(parsed.error)));
        frame = parsed.data;
      } catch {
        return this.reply(ws, new ApiError(400, 'invalid_frame', 'frame: not valid JSON'));
      }
      void this.act(target, frame).catch((err: unknown) => this.reply(ws, toApiError(err)));
      return undefined;
    });
  }

  private async act(target: { kind: 'sessions' | 'runs'; id: string }, frame: ClientFrame): Promise<void> {
    if (target.kind === 'sessions') {
      if (frame.type === 'message') await this.ctx.sessions.startTurn(target.id, frame.content);
      else if (frame.type === 'stop') this.ctx.sessions.stop(target.id);
      else throw new ApiError(400, 'invalid_frame', 'type: "decision" is for /ws/runs/{id}');
      return;
    }
    if (frame.type === 'stop') await this.ctx.runs.stop(target.id);
    else if (frame.type === 'decision') await this.ctx.runs.decide(target.id, frame.decision, frame.feedback);
    else throw new ApiError(400, 'invalid_frame', 'type: "message" is for /ws/sessions/{id}; a run takes "stop" and "decision"');
  }

  private reply(ws: WebSocket, err: ApiError): void {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ type: 'serve_error', ...errorJson(err) }));
  }
}
