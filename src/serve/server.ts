/**
 * `navi serve`'s server: REST (routes.ts, hono on Node's http server through @hono/node-server)
 * and WebSockets (ws-upgrade.ts) on one port, over the sessions and runs hosts. `stop` is the
 * SIGINT/SIGTERM path: no new work, running turns and loops stopped at a safe point and saved,
 * then every socket closed.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { getRequestListener } from '@hono/node-server';
import { Gate } from './auth.js';
import { DEFAULT_MAX_BODY_BYTES, type HostPolicy } from './request-guard.js';
import { createApp } from './routes.js';
import { DEFAULT_POLL_MS, RunsHost } from './runs-host.js';
import { SessionsHost } from './sessions-host.js';
import type { SubscriberLimits } from './subscriber.js';
import type { ServeDeps } from './types.js';
import { WsUpgrades } from './ws-upgrade.js';

export interface ServeOptions {
  host: string;
  port: number;
  /** The bearer token every API request and WebSocket needs (there is always one). */
  token: string;
  /** `--allowed-host` names (request-guard.ts's parseAllowedHost), beside loopback and the bound address. */
  allowedHosts?: readonly string[];
  /** The largest request body (default 1 MB). */
  maxBodyBytes?: number;
  version: string;
  pollMs?: number;
  limits?: SubscriberLimits;
}

export interface RunningServer {
  /** `http://host:port` as bound (port 0 → the one chosen). */
  url: string;
  port: number;
  /** Stops turns and loops (saved), closes every connection. */
  stop: () => Promise<void>;
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** This machine's addresses now (a wildcard-bound server asks when a Host is an address it does not know). */
function localAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address));
}

export async function startServer(deps: ServeDeps, opts: ServeOptions): Promise<RunningServer> {
  const gate = new Gate(opts.token);
  const hosts: HostPolicy = { bound: opts.host, allowed: opts.allowedHosts ?? [], localAddresses };
  const sessions = new SessionsHost(deps);
  const runs = new RunsHost(deps, opts.pollMs ?? DEFAULT_POLL_MS);
  const app = createApp({ deps, sessions, runs, gate, hosts, maxBodyBytes: opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES, version: opts.version, started: Date.now() });
  const ws = new WsUpgrades({ sessions, runs, gate, hosts, log: deps.log, ...(opts.limits !== undefined ? { limits: opts.limits } : {}) });
  const listener = getRequestListener(app.fetch);
  const server: Server = createServer((req, res) => void listener(req, res));
  server.on('upgrade', (req, socket, head) => ws.handle(req, socket, head));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  let stopping: Promise<void> | null = null;
  return {
    url: `http://${urlHost(opts.host)}:${port}`,
    port,
    stop: () =>
      (stopping ??= (async () => {
        server.close();
        await Promise.all([sessions.stopAll(), runs.stopAll()]);
        ws.close();
        server.closeAllConnections();
      })()),
  };
}
