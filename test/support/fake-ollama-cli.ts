/**
 * Standalone fake Ollama for benchmarks and manual tries:
 *   ./node_modules/.bin/tsx test/support/fake-ollama-cli.ts script.json [--port N]
 * (`-` reads the script from stdin). Prints `{"url": …}` as its first stdout line, then serves
 * until SIGINT/SIGTERM. One line per request goes to stderr so a run can be followed.
 */
import { readFileSync } from 'node:fs';
import { startFakeOllama, type FakeScript } from './fake-ollama.js';

function usage(message: string): never {
  process.stderr.write(`fake-ollama: ${message}\nusage: fake-ollama-cli.ts script.json|- [--port N]\n`);
  process.exit(2);
}

function readScript(path: string): FakeScript {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path === '-' ? 0 : path, 'utf8'));
  } catch (err) {
    usage(`cannot read script ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || !Array.isArray((parsed as { turns?: unknown }).turns)) {
    usage(`script ${path} must be a JSON object with a "turns" array`);
  }
  return parsed as FakeScript;
}

const args = process.argv.slice(2);
const portIndex = args.indexOf('--port');
const port = portIndex >= 0 ? Number(args[portIndex + 1]) : 0;
if (!Number.isInteger(port) || port < 0) usage('--port needs a number');
const path = args.find((a, i) => !a.startsWith('--') && (portIndex < 0 || i !== portIndex + 1));
if (path === undefined) usage('missing script path');

const fake = await startFakeOllama(readScript(path), {
  port,
  onRequest: (r) => process.stderr.write(`fake-ollama: ${r.method} ${r.path} ${r.bytes} bytes\n`),
});
process.stdout.write(`${JSON.stringify({ url: fake.url })}\n`);

const stop = (): void => {
  void fake.close().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
