/**
 * A webhook receiver on 127.0.0.1 (real sockets) for notification tests: records every POST
 * (path, query, JSON body) and answers as told — 200, another status, or never (a receiver that
 * hangs: the request stays open until the client gives up or the receiver closes).
 */
import http from 'node:http';
import { onTestFinished } from 'vitest';
import { listenOnLoopback } from '../support/ports.js';

export interface Received {
  method: string;
  /** Path and query as sent. */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export type Answer = { status: number } | 'hang';

export interface Receiver {
  /** `http://127.0.0.1:PORT` */
  base: string;
  received: Received[];
  /** How the next requests are answered (default 200). */
  answer: (req: Received) => Answer;
  close(): Promise<void>;
}

/** Starts a receiver, closed when the test finishes. */
export async function startReceiver(answer: (req: Received) => Answer = () => ({ status: 200 })): Promise<Receiver> {
  const open = new Set<http.ServerResponse>();
  const rec: Receiver = {
    base: '',
    received: [],
    answer,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of open) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        body = { unparsed: Buffer.concat(chunks).toString('utf8') };
      }
      const got: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      rec.received.push(got);
      const a = rec.answer(got);
      if (a === 'hang') {
        open.add(res);
        res.on('close', () => open.delete(res));
        return;
      }
      res.writeHead(a.status, { 'content-type': 'text/plain' }).end(a.status < 300 ? 'ok' : 'no');
    });
  });
  rec.base = `http://127.0.0.1:${await listenOnLoopback(server)}`;
  onTestFinished(() => rec.close());
  return rec;
}
