/**
 * Loopback ports for tests: a server of the test's own on an ephemeral port, and a port nothing
 * listens on. One copy, so every test binds 127.0.0.1 only (never all interfaces) and reads the
 * port the same way.
 */
import { createServer, type Server } from 'node:net';

/** Starts `server` (net or http) on an ephemeral 127.0.0.1 port; resolves with that port. */
export async function listenOnLoopback(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the server has no TCP port');
  return address.port;
}

/**
 * A 127.0.0.1 port nothing listens on (bound, then released): a connection to it is refused, and
 * a server of the test's own (say a PostgreSQL it starts) can take it.
 */
export async function closedPort(): Promise<number> {
  const server = createServer();
  const port = await listenOnLoopback(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
