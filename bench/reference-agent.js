/**
 * The reference agent of bench/run.ts (SPEC §12): the floor that navi's one-shot run and
 * per-iteration gap are measured against, in the same run, interleaved. A minimal Ollama tool
 * loop in plain Node — no dependencies, no tsx, no database: read the prompt, POST /api/chat
 * (stream: true, a tools array) over node:http, parse the NDJSON stream, run the calls it got,
 * append the assistant turn and the tool results, repeat until a reply without calls, print
 * the answer. Each request is rebuilt whole with JSON.stringify, as a naive agent does.
 * The tools do their work for real (files are read and written; the todo list keeps its state).
 *
 *   node bench/reference-agent.js [--model M] [--history FILE] [--max-iterations N] PROMPT
 *
 * OLLAMA_HOST as Ollama reads it (default http://127.0.0.1:11434). --history: a JSON array of
 * prior messages (Ollama's wire shape) placed between the system prompt and the prompt.
 * Exit 0 with the answer on stdout; 1 with the reason on stderr. (A .js file of this "type":
 * "module" package: plain ESM that `node` runs as is.)
 */
import { Buffer } from 'node:buffer';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import process from 'node:process';
import { URL } from 'node:url';

const SYSTEM =
  'You are a coding agent working in the current directory. Use the tools to inspect and change files, ' +
  'keep a todo list for multi-step work, and answer briefly when done.';

const fn = (name, description, properties, required) => ({
  type: 'function',
  function: { name, description, parameters: { type: 'object', properties, required } },
});
const str = (description) => ({ type: 'string', description });
const TOOLS = [
  fn('list_dir', 'List the entries of a directory (directories end with /).', { path: str('directory, relative to the working directory') }, ['path']),
  fn('read_file', 'Read a text file.', { path: str('file path') }, ['path']),
  fn('write_file', 'Write a text file, creating directories as needed.', { path: str('file path'), content: str('the whole new content') }, ['path', 'content']),
  fn(
    'todo',
    'Keep a todo list: add an item, mark one done, or list them.',
    { action: { type: 'string', enum: ['add', 'done', 'list'] }, text: str('item text (add)'), id: { type: 'integer', description: 'item number (done)' } },
    ['action'],
  ),
];

const todos = [];
const listTodos = () => (todos.length === 0 ? '(no items)' : todos.map((t, i) => `${i + 1}. [${t.done ? 'x' : ' '}] ${t.text}`).join('\n'));
const where = (p) => path.resolve(String(p ?? '.'));
const RUN = {
  list_dir: (a) => fs.readdirSync(where(a.path), { withFileTypes: true }).map((e) => e.name + (e.isDirectory() ? '/' : '')).sort().join('\n'),
  read_file: (a) => fs.readFileSync(where(a.path), 'utf8'),
  write_file: (a) => {
    const file = where(a.path);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, String(a.content ?? ''));
    return `wrote ${Buffer.byteLength(String(a.content ?? ''))} bytes to ${a.path}`;
  },
  todo: (a) => {
    if (a.action === 'add') todos.push({ text: String(a.text ?? ''), done: false });
    else if (a.action === 'done' && todos[Number(a.id) - 1]) todos[Number(a.id) - 1].done = true;
    else if (a.action !== 'list') return `error: unknown action or item`;
    return listTodos();
  },
};

function callTool(call) {
  const run = RUN[call.function?.name];
  if (!run) return `error: unknown tool ${call.function?.name}`;
  try {
    return run(call.function.arguments ?? {});
  } catch (err) {
    return `error: ${err.message}`;
  }
}

const agent = new http.Agent({ keepAlive: true });

/** One streamed chat call: resolves with the whole assistant reply once the response has ended. */
function chat(url, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.setEncoding('utf8');
      const reply = { content: '', thinking: '', tool_calls: [] };
      let buf = '';
      let done = false;
      const take = (line) => {
        if (line.trim() === '') return;
        const chunk = JSON.parse(line);
        if (chunk.error) throw new Error(chunk.error);
        reply.content += chunk.message?.content ?? '';
        reply.thinking += chunk.message?.thinking ?? '';
        if (chunk.message?.tool_calls) reply.tool_calls.push(...chunk.message.tool_calls);
        if (chunk.done) done = true;
      };
      res.on('data', (text) => {
        buf += text;
        if (res.statusCode !== 200) return;
        for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          try {
            take(line);
          } catch (err) {
            reject(err);
            req.destroy();
            return;
          }
        }
      });
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}: ${buf.trim()}`));
        try {
          take(buf);
        } catch (err) {
          return reject(err);
        }
        if (done) resolve(reply);
        else reject(new Error('the stream ended without a done chunk'));
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function main(argv) {
  const flag = (name, dflt) => {
    const i = argv.indexOf(name);
    return i < 0 ? dflt : argv.splice(i, 2)[1];
  };
  const model = flag('--model', 'qwen3:8b');
  const historyFile = flag('--history', undefined);
  const maxIterations = Number(flag('--max-iterations', '50'));
  const prompt = argv.join(' ');
  const host = process.env.OLLAMA_HOST || 'http://127.0.0.1:11434';
  const url = new URL('/api/chat', host.includes('://') ? host : `http://${host}`);
  const history = historyFile ? JSON.parse(fs.readFileSync(historyFile, 'utf8')) : [];
  const messages = [{ role: 'system', content: SYSTEM }, ...history, { role: 'user', content: prompt }];
  for (let i = 0; i < maxIterations; i++) {
    const reply = await chat(url, JSON.stringify({ model, messages, tools: TOOLS, stream: true }));
    const turn = { role: 'assistant', content: reply.content };
    if (reply.thinking) turn.thinking = reply.thinking;
    if (reply.tool_calls.length === 0) {
      messages.push(turn);
      return reply.content;
    }
    messages.push({ ...turn, tool_calls: reply.tool_calls });
    for (const call of reply.tool_calls) messages.push({ role: 'tool', tool_name: call.function?.name, content: callTool(call) });
  }
  throw new Error(`no answer after ${maxIterations} iterations`);
}

main(process.argv.slice(2)).then(
  (answer) => {
    agent.destroy();
    process.stdout.write(`${answer}\n`);
  },
  (err) => {
    agent.destroy();
    process.stderr.write(`reference-agent: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
