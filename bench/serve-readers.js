// @ts-check
/**
 * bench/serve.ts's subscribers, in a process of their own so that reading fifty WebSockets does
 * not starve the fake Ollama whose timings are the measured gaps. Usage:
 * `node bench/serve-readers.js WS_URL N` — prints `ready` once all N are open, then one JSON line
 * `{frames: [...]}` once every reader got the turn's `result` event. The server's token comes in
 * NAVI_SERVE_TOKEN (sent as the Authorization header, as scripts do).
 */
import process from 'node:process';
import WebSocket from 'ws';

const [url = '', n = '0'] = process.argv.slice(2);
const count = Number(n);
let open = 0;
let finished = 0;
/** @type {number[]} */
const frames = Array.from({ length: count }, () => 0);
for (let i = 0; i < count; i++) {
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${process.env.NAVI_SERVE_TOKEN ?? ''}` } });
  ws.on('open', () => {
    if (++open === count) process.stdout.write('ready\n');
  });
  ws.on('message', (/** @type {Buffer} */ data) => {
    frames[i] = (frames[i] ?? 0) + 1;
    if (data.includes('"type":"result"')) {
      ws.close();
      if (++finished === count) process.stdout.write(`${JSON.stringify({ frames })}\n`);
    }
  });
  ws.on('error', (err) => {
    process.stderr.write(`reader ${i}: ${String(err)}\n`);
    process.exit(1);
  });
}
