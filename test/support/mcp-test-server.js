// @ts-check
/**
 * An MCP server for tests, written with the official SDK's low-level `Server` (real protocol,
 * real process): stdio by default, streamable HTTP with `--http` (prints `listening on PORT`).
 * Scripted behaviours are tools:
 *   echo {text}            → the text
 *   slow {ms}              → answers after ms (stops early when the client cancels)
 *   crash {stderr_bytes?}  → the process exits mid-call (code 3), after that much stderr if asked
 *   huge {bytes}           → that many bytes of text
 *   fail                   → an `isError` result
 *   image                  → an image block and a text block
 *   change_tools           → sends notifications/tools/list_changed
 *   spawn_child            → starts a grandchild (`sleep`) in the server's process group; answers its pid
 *   pid                    → the server's pid
 *   bad_schema             → listed with an invalid inputSchema (navi must not offer it)
 * Flags: `--tools N` adds N filler tools (filler_0 …), `--only-fillers` lists only those (a
 * plain N-tool server for the bench); `--exit-on-start` exits before
 * answering; `--start-delay MS` delays the `initialize` answer; `--pid-file F` appends the pid;
 * `--name NAME` the server name in `initialize`.
 */
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import http from 'node:http';
import process from 'node:process';
import { clearTimeout, setTimeout } from 'node:timers';
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, InitializeRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const argv = process.argv.slice(2);
/** @param {string} name */
const flag = (name) => {
  const at = argv.indexOf(name);
  return at === -1 ? undefined : argv[at + 1];
};
const fillers = Number(flag('--tools') ?? 0);
const startDelay = Number(flag('--start-delay') ?? 0);
const pidFile = flag('--pid-file');
if (pidFile) appendFileSync(pidFile, `${process.pid}\n`);
if (argv.includes('--exit-on-start')) {
  process.stderr.write('test server: refusing to start (--exit-on-start)\n');
  process.exit(2);
}

const text = (/** @type {string} */ t) => ({ content: [{ type: 'text', text: t }] });
const obj = (/** @type {Record<string, unknown>} */ properties, /** @type {string[]} */ required = []) => ({ type: 'object', properties, required });

const FILLERS = Array.from({ length: fillers }, (_, i) => ({
  name: `filler_${i}`,
  description: `Filler tool number ${i}: looks up a record by id and returns it.`,
  inputSchema: obj({ id: { type: 'string', description: 'record id' }, verbose: { type: 'boolean' } }, ['id']),
}));

const SCRIPTED = [
  { name: 'echo', description: 'Echo the text back.', inputSchema: obj({ text: { type: 'string', description: 'what to echo' } }, ['text']) },
  { name: 'slow', description: 'Answer after ms milliseconds.', inputSchema: obj({ ms: { type: 'integer', minimum: 0 } }, ['ms']) },
  { name: 'crash', description: 'Exit in the middle of the call.', inputSchema: obj({ stderr_bytes: { type: 'integer' } }) },
  { name: 'huge', description: 'Return bytes bytes of text.', inputSchema: obj({ bytes: { type: 'integer' } }, ['bytes']) },
  { name: 'fail', description: 'Return an isError result.', inputSchema: obj({}) },
  { name: 'image', description: 'Return an image.', inputSchema: obj({}) },
  { name: 'change_tools', description: 'Announce a changed tool list.', inputSchema: obj({}) },
  { name: 'spawn_child', description: 'Start a long-running child process.', inputSchema: obj({}) },
  { name: 'pid', description: 'The server process id.', inputSchema: obj({}) },
  { name: 'bad_schema', description: 'Listed with a schema no validator accepts.', inputSchema: obj({ x: { type: 'strnig' } }) },
];
const TOOLS = argv.includes('--only-fillers') ? FILLERS : [...SCRIPTED, ...FILLERS];

function createServer() {
  const server = new Server({ name: flag('--name') ?? 'navi-test-server', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
  if (startDelay > 0) {
    // The SDK answers initialize itself; wrapping its handler delays the answer.
    const original = /** @type {any} */ (server)._requestHandlers.get('initialize');
    server.setRequestHandler(InitializeRequestSchema, async (request, extra) => {
      await new Promise((r) => setTimeout(r, startDelay));
      return original(request, extra);
    });
  }
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = /** @type {Record<string, any>} */ (request.params.arguments ?? {});
    switch (request.params.name) {
      case 'echo':
        return text(String(args.text));
      case 'slow':
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, Number(args.ms));
          extra.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            resolve(undefined);
          });
        });
        return text(`slept ${args.ms} ms`);
      case 'crash':
        // Exits once the pipe took all of it (process.exit drops a large write still pending).
        if (args.stderr_bytes !== undefined) process.stderr.write(`${'.'.repeat(Number(args.stderr_bytes))}\n`);
        process.stderr.write('test server: crashing on purpose\n', () => process.exit(3));
        return new Promise(() => undefined);
      case 'huge':
        return text('x'.repeat(Number(args.bytes)));
      case 'fail':
        return { content: [{ type: 'text', text: 'the thing you asked for does not exist' }], isError: true };
      case 'image':
        return { content: [{ type: 'image', data: Buffer.alloc(300, 1).toString('base64'), mimeType: 'image/png' }, { type: 'text', text: 'a picture' }] };
      case 'change_tools':
        await server.sendToolListChanged();
        return text('tool list changed');
      case 'spawn_child': {
        const child = spawn('sleep', ['1000'], { stdio: 'ignore' });
        if (pidFile && child.pid !== undefined) appendFileSync(pidFile, `${child.pid}\n`);
        return text(String(child.pid));
      }
      case 'pid':
        return text(String(process.pid));
      default:
        if (String(request.params.name).startsWith('filler_')) return text(`record ${args.id}`);
        return { content: [{ type: 'text', text: `unknown tool ${request.params.name}` }], isError: true };
    }
  });
  return server;
}

if (argv.includes('--http')) {
  /** @type {Map<string, StreamableHTTPServerTransport>} */
  const sessions = new Map();
  const httpServer = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (!transport) {
      const auth = flag('--require-auth');
      if (auth !== undefined && req.headers.authorization !== `Bearer ${auth}`) {
        res.writeHead(401).end('unauthorized');
        return;
      }
      const created = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sid) => sessions.set(sid, created) });
      transport = created;
      await createServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  });
  httpServer.listen(Number(flag('--port') ?? 0), '127.0.0.1', () => {
    const address = httpServer.address();
    process.stdout.write(`listening on ${typeof address === 'object' && address ? address.port : ''}\n`);
  });
} else {
  await createServer().connect(new StdioServerTransport());
}
