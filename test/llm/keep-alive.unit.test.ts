/**
 * The adapter keeps one connection for consecutive calls, and recovers when the server closed
 * that connection while navi was busy (a long tool, a slow database open): the request is sent
 * again on a fresh connection instead of failing with ECONNRESET.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chatRequest, clientFor, collect, textOf } from './llm-test-helpers.js';

const DONE_LINE = `${JSON.stringify({ model: 'qwen3:8b', created_at: 'x', message: { role: 'assistant', content: 'hi' }, done: true, done_reason: 'stop' })}\n`;

/**
 * The server runs in its own process: blocking this one (below) must not also stop the
 * server's idle timer. It prints its port, then one line per accepted connection and one per
 * request (before answering it), and appends a byte to CLOSED_FILE each time it has closed an idle
 * connection.
 */
const SERVER_SOURCE = `
const http = require('node:http');
const fs = require('node:fs');
const idleMs = Number(process.env.IDLE_CLOSE_MS);
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    process.stdout.write('request\\n');
    // Like Ollama's Go server: no Keep-Alive header announcing when an idle connection is closed.
    if (idleMs > 0) res.on('finish', () => setTimeout(() => {
      req.socket.destroy();
      fs.appendFileSync(process.env.CLOSED_FILE, 'x');
    }, idleMs));
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.end(process.env.DONE_LINE);
  });
});
server.keepAliveTimeout = 0;
server.on('connection', () => process.stdout.write('connection\\n'));
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

interface Server {
  url: string;
  /**
   * Connections the server accepted before it took its `requests`-th request. Its lines reach
   * this process through a pipe, independently of the answers over TCP, so an answer can arrive
   * before the line of its connection: this waits for the request's own line, printed after.
   */
  connections: (requests: number) => Promise<number>;
  /** Idle connections the server has closed so far. */
  closed: () => number;
  child: ChildProcess;
  dir: string;
}

const open: Server[] = [];

async function serve(idleCloseMs: number): Promise<Server> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'navi-keepalive-'));
  const closedFile = path.join(dir, 'closed');
  const child = spawn(process.execPath, ['-e', SERVER_SOURCE], {
    env: { ...process.env, DONE_LINE, IDLE_CLOSE_MS: String(idleCloseMs), CLOSED_FILE: closedFile },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const count = (line: string): number => out.split('\n').filter((l) => l === line).length;
  const port = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`server exited (${String(code)})`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const first = /^(\d+)\n/.exec(out);
      if (first?.[1] !== undefined) resolve(first[1]);
    });
  });
  const closed = (): number => (fs.existsSync(closedFile) ? fs.statSync(closedFile).size : 0);
  const connections = async (requests: number): Promise<number> => {
    const stdout = child.stdout;
    if (stdout === null) throw new Error('the server has no stdout');
    while (count('request') < requests) {
      await new Promise<void>((resolve, reject) => {
        stdout.once('data', () => resolve());
        child.once('exit', () => reject(new Error('the server exited')));
      });
    }
    return count('connection');
  };
  const s: Server = { url: `http://127.0.0.1:${port}`, connections, closed, child, dir };
  open.push(s);
  return s;
}

/**
 * Keeps the event loop busy, as a long synchronous step of navi would, until `done` holds (a hang
 * guard far above the real milliseconds throws).
 */
function blockUntil(done: () => boolean, guardMs = 20_000): void {
  const deadline = Date.now() + guardMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`hang guard: still waiting after ${guardMs} ms`);
  }
}

afterEach(() => {
  for (const s of open.splice(0)) {
    s.child.kill();
    fs.rmSync(s.dir, { recursive: true, force: true });
  }
});

describe('keep-alive', () => {
  it('reuses one connection for consecutive calls', async () => {
    const s = await serve(0);
    const client = clientFor(s.url);
    for (let i = 0; i < 3; i++) expect(textOf(await collect(client.chatStream(chatRequest())), 'text')).toBe('hi');
    expect(await s.connections(3)).toBe(1);
  });

  it('sends again on a new connection when the server closed the idle one while navi was busy', async () => {
    const s = await serve(20);
    const client = clientFor(s.url);
    expect(textOf(await collect(client.chatStream(chatRequest())), 'text')).toBe('hi');
    // The server closes the idle connection after 20 ms; navi, blocked, does not notice.
    blockUntil(() => s.closed() >= 1);
    expect(textOf(await collect(client.chatStream(chatRequest())), 'text')).toBe('hi');
    expect(await s.connections(2)).toBe(2);
  });
});
